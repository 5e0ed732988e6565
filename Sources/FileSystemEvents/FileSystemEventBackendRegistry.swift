public import FileSystemEventsCore
import Synchronization

/// A backend written outside this package, registered under a name so that configuration
/// selects it like a built-in one (`FILEWATCH_BACKEND`, the JSON file's `backend`, a host's
/// own `--backend`), and `auto` can prefer it.
///
/// ```swift
/// try FileSystemEventBackendRegistry.shared.register(RegisteredBackend(
///     name: "fanotify", summary: "fanotify(7) marks on the mount (needs CAP_SYS_ADMIN)",
///     availability: { geteuid() == 0 ? .available : .unavailable(reason: "needs CAP_SYS_ADMIN", remedy: "run as root") },
///     makeSource: { options in FanotifySource(options: options) }
/// ))
/// let configuration = try await WatchConfiguration.load(roots: ["/srv"])   // FILEWATCH_BACKEND=fanotify
/// ```
///
/// The options it receives never ask for what every backend gets from this package on top
/// (``WatchOptions/waitsForMissingRoots``, ``WatchOptions/stampsStableIDs``): those wrap the
/// registered source, as they wrap the built-in ones. Run the conformance suite
/// (`FileSystemEventsConformance`) against it before registering it.
public struct RegisteredBackend: Sendable {
    /// Makes the backend's own source from options already validated, which never ask for
    /// waiting for roots or stable IDs. It may be called more than once, and after
    /// ``makeSource(options:)`` has returned (when a missing root appears).
    public typealias SourceFactory = @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource

    /// How configuration spells it (compared case-insensitively; not a built-in name).
    public let name: String
    /// One line for `filewatch backends` and for error messages.
    public let summary: String
    /// Asked each time the backend is chosen: whether it can run in this process now.
    public let availability: @Sendable () -> FileSystemEventBackend.Availability
    /// What the backend can do, as `filewatch backends` shows it; `nil` when not declared, and
    /// then a source waiting for a missing root reports polling's.
    public let capabilities: FileSystemEventSourceCapabilities?
    private let factory: SourceFactory

    /// Registers nothing: pass it to ``FileSystemEventBackendRegistry/register(_:)``.
    /// `availability` defaults to always available.
    public init(
        name: String,
        summary: String,
        capabilities: FileSystemEventSourceCapabilities? = nil,
        availability: @escaping @Sendable () -> FileSystemEventBackend.Availability = { .available },
        makeSource: @escaping SourceFactory
    ) {
        self.name = name
        self.summary = summary
        self.capabilities = capabilities
        self.availability = availability
        self.factory = makeSource
    }

    /// Makes a source for `options`, as ``FileSystemEventBackend/makeSource(options:)`` does
    /// for a built-in backend: options checked, availability checked, and the package's own
    /// layers (waiting for roots, stable IDs) around it.
    public func makeSource(options: WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource {
        try options.validate()
        if case .unavailable(let reason, let remedy) = availability() {
            throw .backendUnavailable(name: name, reason: reason, remedy: remedy)
        }
        let factory = self.factory
        return try FileSystemEventBackend.layered(options, backendName: name, capabilities: capabilities) { inner throws(FileSystemEventsError) in
            try factory(inner)
        }
    }
}

/// The backends registered in this process, beside the built-in ones
/// (``FileSystemEventBackend``), and the order in which `auto` tries them.
///
/// Like swift-log's `LoggingSystem`, it is process-wide: a host app registers its backends
/// once at start-up, before it reads configuration.
public final class FileSystemEventBackendRegistry: Sendable {
    /// The registry configuration and `auto` read: register backends here.
    public static let shared = FileSystemEventBackendRegistry()

    private struct State {
        var backends: [RegisteredBackend] = []
        var autoPreference: [String]?
    }

    private let state = Mutex(State())

    /// A separate, empty registry; configuration and `auto` read only ``shared``.
    public init() {}

    /// Registers `backend`. A name already taken, by a built-in backend or a registered one,
    /// is ``FileSystemEventsError/backendNameTaken(_:)``.
    public func register(_ backend: RegisteredBackend) throws(FileSystemEventsError) {
        let name = backend.name.lowercased()
        guard !name.isEmpty, FileSystemEventBackend(rawValue: name) == nil else { throw .backendNameTaken(backend.name) }
        let added = state.withLock { state -> Bool in
            guard !state.backends.contains(where: { $0.name.lowercased() == name }) else { return false }
            state.backends.append(backend)
            return true
        }
        if !added { throw .backendNameTaken(backend.name) }
    }

    /// Removes the backend registered as `name`, if any.
    public func unregister(name: String) {
        state.withLock { $0.backends.removeAll { $0.name.lowercased() == name.lowercased() } }
    }

    /// The registered backend called `name` (case-insensitively).
    public func backend(named name: String) -> RegisteredBackend? {
        state.withLock { state in state.backends.first { $0.name.lowercased() == name.lowercased() } }
    }

    /// Every registered backend, in the order of registration.
    public var backends: [RegisteredBackend] {
        state.withLock { $0.backends }
    }

    /// The order in which `auto` tries backends, by name (built-in or registered); the first
    /// available one wins, and inotify and inotifytools are passed over for roots on network
    /// or FUSE file systems. `nil` (the default): inotify where it can see every change,
    /// polling elsewhere.
    public var autoPreference: [String]? {
        get { state.withLock { $0.autoPreference } }
        set { state.withLock { $0.autoPreference = newValue?.map { $0.lowercased() } } }
    }

    /// Every name configuration accepts, built-in first.
    public var knownNames: [String] {
        FileSystemEventBackend.allCases.map(\.rawValue) + backends.map(\.name)
    }
}
