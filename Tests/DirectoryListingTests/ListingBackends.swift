import FileSystemEvents

/// A backend the listing suite runs on: a name for reports and the source factory.
struct ListingBackend: Sendable, CustomStringConvertible {
    var name: String
    var makeSource: DirectoryListing.SourceFactory

    var description: String { name }

    /// Polling with a short interval so the suite stays fast; the kernel backends as they are.
    /// inotifytools runs when the package is built with the InotifyTools trait.
    static let available: [ListingBackend] = {
        var backends = [
            ListingBackend(name: "polling") { options throws(FileSystemEventsError) in
                var options = options
                options.pollInterval = .milliseconds(40)
                return PollingEventSource(options: options)
            }
        ]
        for backend in [FileSystemEventBackend.inotify, .inotifytools] where backend.buildAvailability.isAvailable {
            backends.append(ListingBackend(name: backend.rawValue) { options throws(FileSystemEventsError) in
                try backend.makeSource(options: options)
            })
        }
        return backends
    }()
}
