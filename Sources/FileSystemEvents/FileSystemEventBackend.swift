#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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

    public var description: String { rawValue }

    /// Parses a backend name, case-insensitively.
    public init(name: String) throws(FileSystemEventsError) {
        guard let backend = Self(rawValue: name.lowercased()) else {
            throw .unknownBackend(name, known: Self.allCases.map(\.rawValue))
        }
        self = backend
    }

    /// Whether the backend can run in this process, and if not, what would make it run.
    public enum Availability: Sendable, Hashable {
        case available
        case unavailable(reason: String, remedy: String)

        public var isAvailable: Bool { self == .available }
    }

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
        guard FileSystemEventBackend.inotify.availability.isAvailable else { return .polling }
        // inotify only hears changes made through this kernel: on a network or FUSE file
        // system other hosts' writes are silent, so only polling is correct there.
        if roots.contains(where: { FileSystemKind.of($0).isRemoteOrUserSpace }) { return .polling }
        return .inotify
    }

    /// Makes a source for `options`, failing with a typed error that says how to enable a
    /// backend that is not available here. Options no source can honour (``WatchOptions/validate()``) are rejected here already.
    public func makeSource(options: WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource {
        try options.validate()
        if options.stampsStableIDs {
            var innerOptions = options
            innerOptions.stampsStableIDs = false
            innerOptions.capturesInitialState = true
            return StableIDSource(options: options, base: try makeSource(options: innerOptions))
        }
        if options.waitsForMissingRoots {
            var innerOptions = options
            innerOptions.waitsForMissingRoots = false
            let inner = try makeSource(options: innerOptions)
            return AwaitingRootsSource(options: options, backendName: inner.backendName, capabilities: inner.capabilities) { options throws(FileSystemEventsError) in
                try self.makeSource(options: options)
            }
        }
        let backend = resolved(for: options.roots)
        if case .unavailable(let reason, let remedy) = backend.availability {
            throw .backendUnavailable(name: backend.rawValue, reason: reason, remedy: remedy)
        }
        switch backend {
        case .auto, .polling:
            return PollingEventSource(options: options)
        case .inotify:
            return try InotifyBackendSupport.makeSource(options: options)
        case .inotifytools:
            return try InotifyToolsBackendSupport.makeSource(options: options)
        }
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
