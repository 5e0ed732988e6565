import FileSystemEventsCore
#if os(Linux)
import FileSystemEventsInotify
#endif
#if InotifyTools && os(Linux)
import FileSystemEventsInotifyTools
#endif

/// Glue between the backend enum and the raw inotify backend, kept apart so the enum reads
/// the same on platforms without inotify.
enum InotifyBackendSupport {
    static var availability: FileSystemEventBackend.Availability {
        #if os(Linux)
        return .available
        #else
        return .unavailable(reason: "inotify exists only on Linux", remedy: "use the polling backend")
        #endif
    }

    static var capabilities: FileSystemEventSourceCapabilities? {
        #if os(Linux)
        return InotifyEventSource.capabilities
        #else
        return nil
        #endif
    }

    static func makeSource(options: WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource {
        #if os(Linux)
        return InotifyEventSource(options: options)
        #else
        throw .backendUnavailable(name: "inotify", reason: "inotify exists only on Linux", remedy: "use the polling backend")
        #endif
    }
}

/// Glue for the libinotifytools backend, compiled only with the `InotifyTools` trait.
enum InotifyToolsBackendSupport {
    static let remedy =
        "enable the package trait InotifyTools (swift build --traits InotifyTools; host apps: traits: [\"InotifyTools\"]) "
        + "and install Debian's libinotifytools0-dev; note that libinotifytools is GPL-2"

    static var availability: FileSystemEventBackend.Availability {
        #if InotifyTools && os(Linux)
        return .available
        #else
        return .unavailable(reason: "this build does not include the libinotifytools backend", remedy: remedy)
        #endif
    }

    static var capabilities: FileSystemEventSourceCapabilities? {
        #if InotifyTools && os(Linux)
        return InotifyToolsEventSource.capabilities
        #else
        return nil
        #endif
    }

    static func makeSource(options: WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource {
        #if InotifyTools && os(Linux)
        return InotifyToolsEventSource(options: options)
        #else
        throw .backendUnavailable(name: "inotifytools", reason: "this build does not include the libinotifytools backend", remedy: remedy)
        #endif
    }
}
