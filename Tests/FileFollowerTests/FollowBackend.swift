import FileSystemEvents

/// A backend the follower suite runs on: a name for reports and the source factory.
struct FollowBackend: Sendable, CustomStringConvertible {
    var name: String
    var makeSource: FileFollower.SourceFactory

    var description: String { name }

    /// Polling with a short interval so the suite stays fast; the kernel backends as they are.
    /// inotifytools runs when the package is built with the InotifyTools trait.
    static let available: [FollowBackend] = {
        var backends = [
            FollowBackend(name: "polling") { options throws(FileSystemEventsError) in
                var options = options
                options.pollInterval = .milliseconds(40)
                return PollingEventSource(options: options)
            }
        ]
        for backend in [FileSystemEventBackend.inotify, .inotifytools] where backend.buildAvailability.isAvailable {
            backends.append(FollowBackend(name: backend.rawValue) { options throws(FileSystemEventsError) in
                try backend.makeSource(options: options)
            })
        }
        return backends
    }()
}
