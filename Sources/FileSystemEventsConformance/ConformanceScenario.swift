public import FileSystemEventsCore
import Synchronization

/// One behaviour every backend must show, runnable against any ``ConformanceBackend``.
public struct ConformanceScenario: Sendable, CustomStringConvertible, Hashable {
    /// The scenario's number: it alone identifies the scenario (equality and hashing use it), and
    /// ``ConformanceSuite/scenario(_:)`` looks it up.
    public let number: Int
    /// What the scenario checks, in a few words, for reports.
    public let name: String
    /// Whether the scenario is worth running a second time as an unprivileged user: it depends
    /// on permissions, or it races the kernel in ways a root process's privileges could hide
    /// (root reads every directory and has its own inotify limits). `scripts/test.sh` reruns
    /// these as `nobody` (FILEWATCH_CONFORMANCE_ONLY=unprivileged).
    public let runsUnprivileged: Bool
    let body: @Sendable (ConformanceContext) async throws -> Void

    init(
        _ number: Int, _ name: String, runsUnprivileged: Bool = false,
        _ body: @escaping @Sendable (ConformanceContext) async throws -> Void
    ) {
        self.number = number
        self.name = name
        self.runsUnprivileged = runsUnprivileged
        self.body = body
    }

    /// `number. name`, as test reports show it.
    public var description: String { "\(number). \(name)" }

    /// Runs the scenario in a fresh scratch tree; every watch it started is stopped afterwards,
    /// whether it passed or not. Throws ``ConformanceFailure`` or ``ConformanceSkip``.
    public func run(against backend: ConformanceBackend) async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        let context = ConformanceContext(backend: backend, tree: tree)
        do {
            try await body(context)
        } catch {
            let hung = await context.stopAll()
            if hung > 0, let failure = error as? ConformanceFailure {
                throw ConformanceFailure(failure.message + "\n" + Self.hangMessage(hung))
            }
            throw error
        }
        let hung = await context.stopAll()
        try check(hung == 0, Self.hangMessage(hung))
    }

    private static func hangMessage(_ count: Int) -> String {
        "\(count) watch(es) did not stop within \(WatchSession.stopDeadline) of stop(): the backend hangs "
            + "(its producer never ends; it is abandoned, still running, so the rest of the suite can go on)"
    }

    /// The same scenario when the numbers are equal.
    public static func == (lhs: ConformanceScenario, rhs: ConformanceScenario) -> Bool { lhs.number == rhs.number }
    /// Hashes the number alone, as `==` compares it alone.
    public func hash(into hasher: inout Hasher) { hasher.combine(number) }
}

/// What a scenario works with: the backend, a scratch tree, and watches on it.
public final class ConformanceContext: Sendable {
    /// The backend under test.
    public let backend: ConformanceBackend
    /// A fresh scratch tree for this run of the scenario, deleted with everything in it once it
    /// is released.
    public let tree: ScratchTree
    private let sessions = Mutex<[WatchSession]>([])

    init(backend: ConformanceBackend, tree: ScratchTree) {
        self.backend = backend
        self.tree = tree
    }

    /// Starts a watch on the scratch root (or as `configure` says) and waits for `ready`.
    public func watch(_ configure: (inout WatchOptions) -> Void = { _ in }) async throws -> WatchSession {
        var options = WatchOptions(roots: [tree.root])
        configure(&options)
        return try await watch(options: options, backend: backend)
    }

    /// Starts a watch with `options` from `backend` (a wrapper of the backend under test) and
    /// waits for `ready`; it is stopped with the scenario's other watches.
    public func watch(options: WatchOptions, backend: ConformanceBackend) async throws -> WatchSession {
        let session = try await WatchSession.start(tree: tree, options: options, backend: backend)
        sessions.withLock { $0.append(session) }
        return session
    }

    /// Stops every watch; returns how many did not stop within ``WatchSession/stopDeadline``.
    func stopAll() async -> Int {
        var hung = 0
        for session in sessions.withLock({ $0 }) where !(await session.stop(within: WatchSession.stopDeadline)) {
            hung += 1
        }
        return hung
    }
}
