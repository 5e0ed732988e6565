import FileSystemEvents
import Glibc
import SystemPackage
import FileSystemEventsConformance
import DigestPollingBackend

/// The built-in backends as the conformance suite runs them.
///
/// Polling runs with a short interval so the suite stays fast; nothing else is tuned, and no
/// backend is told it is under test.
enum ConformanceBackends {
    static let polling = ConformanceBackend(name: "polling") { options in
        var options = options
        options.pollInterval = .milliseconds(40)
        return PollingEventSource(options: options)
    }

    /// The example third-party backend, made by its registration (so waiting for roots and
    /// stable IDs wrap it as configuration would), with polling's short interval.
    static let digestPolling = ConformanceBackend(name: DigestPollingEventSource.name) { options in
        var options = options
        options.pollInterval = .milliseconds(40)
        return try DigestPollingEventSource.registration.makeSource(options: options)
    }

    /// A subscription of a ``FileSystemWatcher`` that watches the directory *above* the
    /// scenario's root (the scratch directory, with `outside` beside the root), so the
    /// subscription's own filtering does the work: moves in and out of the root arrive as
    /// renames across its boundary. A root that is a file or a symlink is watched as itself.
    static func shared(over backend: FileSystemEventBackend) -> ConformanceBackend {
        ConformanceBackend(name: "shared watcher (\(backend.rawValue))") { options in
            var watched = options
            var roots: [FilePath] = []
            for root in options.roots {
                let parent = root.removingLastComponent()
                let candidate = isPlainDirectory(root) && !parent.isEmpty ? parent : root
                if !roots.contains(candidate) { roots.append(candidate) }
            }
            watched.roots = roots
            watched.filter = .everything
            watched.isRecursive = true
            watched.latency = .zero
            watched.bufferLimit = 65_536
            // The same short interval as the polling backend's own run.
            if backend == .polling { watched.pollInterval = .milliseconds(40) }
            let watcher = FileSystemWatcher(options: watched) { options throws(FileSystemEventsError) in
                try backend.makeSource(options: options)
            }
            return watcher.source(for: options)
        }
    }

    private static func isPlainDirectory(_ path: FilePath) -> Bool {
        var info = stat()
        return lstat(path.string, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The backend's updates delivered to a handler on the watch's own thread
    /// (`updates(deliveringTo:)`, as `filewatch watch` consumes them).
    static func handlerDelivered(_ backend: FileSystemEventBackend) -> ConformanceBackend {
        ConformanceBackend(name: "\(backend.rawValue) (handler delivery)") { options in
            HandlerDeliveredSource(base: try backend.makeSource(options: options))
        }
    }

    static func named(_ backend: FileSystemEventBackend) -> ConformanceBackend {
        ConformanceBackend(name: backend.rawValue) { options in
            try backend.makeSource(options: options)
        }
    }
}
