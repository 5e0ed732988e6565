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
    /// Whether this build has the backend. A backend asked for by name needs only this: where
    /// the kernel then refuses an instance, its start fails with the typed error that names
    /// the limit (``FileSystemEventsError/instanceLimitReached(currentLimit:)``).
    static var buildAvailability: FileSystemEventBackend.Availability {
        #if os(Linux)
        return .available
        #else
        return .unavailable(reason: "inotify exists only on Linux", remedy: "use the polling backend")
        #endif
    }

    /// Whether the backend can start in this process now: this build has it, and the kernel
    /// gives it an inotify instance (one is made and closed). What `auto` and `filewatch
    /// backends` go by: with the user's instances used up by other watchers, `auto` picked
    /// inotify, whose start then failed, and `backends` said it was available.
    static var availability: FileSystemEventBackend.Availability {
        #if os(Linux)
        guard let refusal = RawInotifyKernel.probeInstance() else { return .available }
        return FileSystemEventBackend.Availability(inotifyRefusal: refusal)
        #else
        return buildAvailability
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

    /// Whether this build has the backend (see ``InotifyBackendSupport/buildAvailability``).
    static var buildAvailability: FileSystemEventBackend.Availability {
        #if InotifyTools && os(Linux)
        return .available
        #else
        return .unavailable(reason: "this build does not include the libinotifytools backend", remedy: remedy)
        #endif
    }

    /// Whether the backend can start in this process now: libinotifytools makes an inotify
    /// instance of its own (see ``InotifyBackendSupport/availability``).
    static var availability: FileSystemEventBackend.Availability {
        guard buildAvailability.isAvailable else { return buildAvailability }
        return InotifyBackendSupport.availability
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

extension FileSystemEventBackend.Availability {
    /// An inotify backend that cannot start because the kernel refused it an instance.
    init(inotifyRefusal refusal: FileSystemEventsError) {
        switch refusal {
        case .instanceLimitReached(let limit):
            let explanation = FileSystemEventsError.instanceLimitExplanation(limit)
            self = .unavailable(reason: explanation.reason, remedy: explanation.remedy)
        default:
            // The process's descriptors used up, a kernel without inotify, a sandbox that
            // forbids it: the error says which.
            self = .unavailable(reason: "no inotify instance can be created: \(refusal)", remedy: "fix that, or use the polling backend")
        }
    }
}
