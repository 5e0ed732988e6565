import PlatformLibc
public import FileSystemEventsCore
import CFileSystemEventsShims
import FileSystemEventsPolling
public import SystemPackage

/// The backends a host app can pick by name: in code, with `FILEWATCH_BACKEND`, in a JSON
/// configuration file, or with `filewatch --backend`.
public enum FileSystemEventBackend: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The best backend for the roots: inotify on local Linux file systems, polling where the
    /// kernel cannot see every change (network and FUSE file systems) or has no inotify.
    case auto
    /// Stat snapshots compared every poll interval; works on any file system.
    case polling
    /// Raw inotify through direct system calls (Linux).
    case inotify
    /// The libinotifytools C library (Linux, GPL-2; needs the `InotifyTools` package trait).
    case inotifytools

    /// The name as configuration spells it.
    public var description: String { rawValue }

    /// Parses a backend name, case-insensitively.
    public init(name: String) throws(FileSystemEventsError) {
        guard let backend = Self(rawValue: name.lowercased()) else {
            throw .unknownBackend(name, known: FileSystemEventBackendRegistry.shared.knownNames)
        }
        self = backend
    }

    /// Whether the backend can run in this process, and if not, what would make it run.
    public enum Availability: Sendable, Hashable {
        /// Nothing stops the backend from running in this process.
        case available
        /// It cannot run here: `reason` says why and `remedy` what would change that, both
        /// shown by `filewatch backends` and carried by
        /// ``FileSystemEventsError/backendUnavailable(name:reason:remedy:)``.
        case unavailable(reason: String, remedy: String)

        /// `true` for ``available``, for callers that do not need the reason.
        public var isAvailable: Bool { self == .available }
    }

    /// Whether the backend can run in this process now: `auto` and `polling` always; `inotify`
    /// on Linux, and `inotifytools` on Linux with the `InotifyTools` package trait, where the
    /// kernel gives the process an inotify instance (an instance is made and closed to find
    /// out, so the answer holds for that moment). `auto` passes over a kernel backend that is
    /// not available.
    public var availability: Availability {
        switch self {
        case .auto, .polling:
            return .available
        case .inotify:
            return InotifyBackendSupport.availability
        case .inotifytools:
            return InotifyToolsBackendSupport.availability
        }
    }

    /// Whether this build has the backend, whatever the kernel allows now. A backend asked for
    /// by name needs only this: if the kernel then refuses it, its start fails with the typed
    /// error that says which limit to raise.
    package var buildAvailability: Availability {
        switch self {
        case .auto, .polling:
            return .available
        case .inotify:
            return InotifyBackendSupport.buildAvailability
        case .inotifytools:
            return InotifyToolsBackendSupport.buildAvailability
        }
    }

    /// What the backend can do; `nil` for `auto` (its choice depends on the roots) and for a
    /// backend this build cannot run.
    public var capabilities: FileSystemEventSourceCapabilities? {
        switch self {
        case .auto: return nil
        case .polling: return PollingEventSource.capabilities
        case .inotify: return InotifyBackendSupport.capabilities
        case .inotifytools: return InotifyToolsBackendSupport.capabilities
        }
    }

    /// The concrete backend `auto` picks for `roots`.
    public func resolved(for roots: [FilePath]) -> FileSystemEventBackend {
        guard self == .auto else { return self }
        // inotify only hears changes made through this kernel: on a network or FUSE file
        // system other hosts' writes are silent, so only polling is correct there.
        if roots.contains(where: { FileSystemKind.of($0).isRemoteOrUserSpace }) { return .polling }
        return FileSystemEventBackend.inotify.availability.isAvailable ? .inotify : .polling
    }

    /// Makes a source for `options`, failing with a typed error that says how to enable a
    /// backend that is not available here. Options no source can honour (``WatchOptions/validate()``) are rejected here already.
    public func makeSource(options: WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource {
        try options.validate()
        if self == .auto, let preferred = try Self.preferredSource(for: options) { return preferred }
        let backend = resolved(for: options.roots)
        if case .unavailable(let reason, let remedy) = backend.buildAvailability {
            throw .backendUnavailable(name: backend.rawValue, reason: reason, remedy: remedy)
        }
        return try Self.layered(options, backendName: backend.rawValue, capabilities: backend.capabilities) { inner throws(FileSystemEventsError) in
            switch backend {
            case .auto, .polling:
                return PollingEventSource(options: inner)
            case .inotify:
                return try InotifyBackendSupport.makeSource(options: inner)
            case .inotifytools:
                return try InotifyToolsBackendSupport.makeSource(options: inner)
            }
        }
    }

    /// The name of the backend `auto` uses for `roots`: the first available one in
    /// ``FileSystemEventBackendRegistry/autoPreference`` when that is set, otherwise
    /// ``resolved(for:)``'s choice. `filewatch backends` shows it.
    public static func autoChoice(for roots: [FilePath]) -> String {
        switch preferredBackend(for: roots) {
        case .builtIn(let backend): return backend.rawValue
        case .registered(let backend): return backend.name
        case nil: return FileSystemEventBackend.auto.resolved(for: roots).rawValue
        }
    }

    private enum PreferredBackend {
        case builtIn(FileSystemEventBackend)
        case registered(RegisteredBackend)
    }

    /// `auto` with ``FileSystemEventBackendRegistry/autoPreference`` set: the first available
    /// backend in that order (`nil` to fall back to the usual choice). Only polling sees other
    /// hosts' changes on a network or FUSE file system, so nothing else is taken for one.
    private static func preferredBackend(for roots: [FilePath]) -> PreferredBackend? {
        guard let order = FileSystemEventBackendRegistry.shared.autoPreference else { return nil }
        let remote = roots.contains { FileSystemKind.of($0).isRemoteOrUserSpace }
        for name in order {
            if let builtIn = FileSystemEventBackend(rawValue: name), builtIn != .auto {
                guard builtIn.availability.isAvailable, !(remote && builtIn != .polling) else { continue }
                return .builtIn(builtIn)
            }
            if let registered = FileSystemEventBackendRegistry.shared.backend(named: name), registered.availability().isAvailable {
                return .registered(registered)
            }
        }
        return nil
    }

    private static func preferredSource(for options: WatchOptions) throws(FileSystemEventsError) -> (any FileSystemEventSource)? {
        switch preferredBackend(for: options.roots) {
        case .builtIn(let backend): return try backend.makeSource(options: options)
        case .registered(let backend): return try backend.makeSource(options: options)
        case nil: return nil
        }
    }

    /// The layers this package puts around any backend's source, built-in or registered:
    /// stable IDs (outermost), then waiting for missing roots, then one watch for roots that
    /// nest (``NestedRootsSource``). `base` makes the backend's own source, for options that
    /// ask for none of them.
    static func layered(
        _ options: WatchOptions,
        backendName: String,
        capabilities: FileSystemEventSourceCapabilities?,
        base: @escaping @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource
    ) throws(FileSystemEventsError) -> any FileSystemEventSource {
        if options.stampsStableIDs {
            var innerOptions = options
            innerOptions.stampsStableIDs = false
            innerOptions.capturesInitialState = true
            return StableIDSource(options: options, base: try layered(innerOptions, backendName: backendName, capabilities: capabilities, base: base))
        }
        let watchingNestedRootsOnce = NestedRootsSource.sharingNestedRoots(backendName: backendName, capabilities: capabilities, base: base)
        if options.waitsForMissingRoots {
            // No source of the missing roots is made here: a backend that looks at its roots
            // when it is made would fail for the very roots this layer waits for.
            let described = capabilities ?? PollingEventSource.capabilities
            return AwaitingRootsSource(options: options, backendName: backendName, capabilities: described) { options throws(FileSystemEventsError) in
                var options = options
                options.waitsForMissingRoots = false
                try options.validate()
                return try watchingNestedRootsOnce(options)
            }
        }
        return try watchingNestedRootsOnce(options)
    }
}

/// What kind of file system a path lives on, from `statfs(2)`'s magic number.
enum FileSystemKind {
    case local
    case remoteOrUserSpace(String)

    var isRemoteOrUserSpace: Bool {
        if case .remoteOrUserSpace = self { return true }
        return false
    }

    static func of(_ path: FilePath) -> FileSystemKind {
        let magic = path.withPlatformString { cfse_file_system_magic($0) }
        switch magic {
        case 0x6969: return .remoteOrUserSpace("nfs")
        case 0xFF53_4D42: return .remoteOrUserSpace("cifs")
        case 0xFE53_4D42: return .remoteOrUserSpace("smb2")
        case 0x517B: return .remoteOrUserSpace("smb")
        case 0x6573_5546: return .remoteOrUserSpace("fuse")
        case 0x0102_1997: return .remoteOrUserSpace("9p")
        case 0x5346_414F: return .remoteOrUserSpace("afs")
        case 0x0BD0_0BD0: return .remoteOrUserSpace("lustre")
        case 0x0047_504C: return .remoteOrUserSpace("gpfs")
        case 0x0083_E135: return .remoteOrUserSpace("ceph")
        default: return .local
        }
    }
}
