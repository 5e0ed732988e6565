import PlatformLibc
public import FileSystemEventsCore
import SystemPackage
import Synchronization

/// One running watch under test: consumes the source's updates in a task of its own, records
/// them, and lets a scenario wait for conditions on them with a deadline (never a sleep).
public final class WatchSession: Sendable {
    /// The scratch tree the scenario works in.
    public let tree: ScratchTree
    /// The options the watch was started with.
    public let options: WatchOptions
    /// The source under test, made from ``options`` by the backend.
    public let source: any FileSystemEventSource
    let stream: FileSystemEventStream
    private let state: Mutex<Recorder>
    private let consumer: Mutex<Task<Void, Never>?> = Mutex(nil)
    /// The trees on disk (one per root) when the source said `ready`: the replay's starting point.
    let initialTrees: Mutex<[DiskTree]?> = Mutex(nil)
    /// Where failures are traced (``traceFailure(label:problems:)``): the files with several
    /// names at `ready`, every name whatever the filter.
    let initialLinkedNames: Mutex<String> = Mutex("")
    /// The roots' bytes, for telling the harness's marker files apart without `FilePath`.
    private let rootBytes: [[UInt8]]

    /// How long any single wait may take before the scenario fails. Generous: a loaded
    /// two-core CI machine is slow, and a correct backend always gets there.
    public static let deadline: Duration = .seconds(90)

    /// What has been recorded so far; conditions are evaluated against it.
    public struct Recorded: Sendable {
        /// The events received after `ready`, in order (those before it are kept apart, in
        /// ``WatchSession/eventsBeforeReady``).
        public var events: [FileSystemEvent] = []
        /// For each event, what the consumer read when it received it (see ``ContentObservation``).
        public var observations: [ContentObservation?] = []
        /// The diagnostics received, before `ready` or after.
        public var diagnostics: [FileSystemWatchDiagnostic] = []
        /// The source has said `ready`.
        public var isReady = false
        /// The stream has ended: it finished, failed or was stopped.
        public var isFinished = false
    }

    struct Waiter {
        let condition: @Sendable (Recorded) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    struct Recorder: ~Copyable {
        var recorded = Recorded()
        var eventsBeforeReady: [FileSystemEvent] = []
        var sawScanStarted = false
        var error: FileSystemEventsError?
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var isPaused = false
        var resume: CheckedContinuation<Void, Never>?
    }

    init(tree: ScratchTree, options: WatchOptions, source: any FileSystemEventSource) {
        self.tree = tree
        self.options = options
        self.source = source
        self.stream = source.updates()
        self.state = Mutex(Recorder())
        self.rootBytes = options.roots.map { WatchOptions.absolute($0).bytes }
    }

    /// Starts consuming and returns once the source is ready (or fails).
    static func start(tree: ScratchTree, options: WatchOptions, backend: ConformanceBackend) async throws -> WatchSession {
        let source = try backend.makeSource(options)
        let session = WatchSession(tree: tree, options: options, source: source)
        let stream = session.stream
        let task = Task { [session] in
            do {
                for try await update in stream {
                    session.record(update)
                    await session.waitWhilePaused()
                }
                session.finish(nil)
            } catch {
                session.finish(error)
            }
        }
        session.consumer.withLock { $0 = task }
        try await session.waitUntil("the source to become ready") { $0.isReady || $0.isFinished }
        if let error = session.state.withLock({ $0.error }) {
            throw error
        }
        try check(session.state.withLock { $0.recorded.isReady }, "the stream ended before ready")
        session.initialTrees.withLock { $0 = session.readDisks() }
        if StressSettings.tracesFailures { session.initialLinkedNames.withLock { $0 = session.describeLinkedNames() } }
        return session
    }

    // MARK: Recording

    private func record(_ update: FileSystemWatchUpdate) {
        // Read what a consumer reads on this batch now, as a consumer would, outside the lock.
        var observations: [ContentObservation?] = []
        if case .events(let events) = update {
            observations = events.map(ContentObservation.forEvent)
        }
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            switch update {
            case .scanStarted: state.sawScanStarted = true
            case .ready: state.recorded.isReady = true
            case .events(let events):
                if state.recorded.isReady {
                    state.recorded.events += events
                    state.recorded.observations += observations
                } else {
                    state.eventsBeforeReady += events
                }
            case .diagnostic(let diagnostic): state.recorded.diagnostics.append(diagnostic)
            }
            return Self.satisfiedWaiters(&state)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    private func finish(_ error: (any Error)?) {
        let waiters = state.withLock { state -> [(CheckedContinuation<Bool, Never>, Bool)] in
            state.recorded.isFinished = true
            state.error = error as? FileSystemEventsError
            var all: [(CheckedContinuation<Bool, Never>, Bool)] = []
            for (_, waiter) in state.waiters {
                all.append((waiter.continuation, waiter.condition(state.recorded)))
            }
            state.waiters = [:]
            return all
        }
        for (continuation, value) in waiters { continuation.resume(returning: value) }
    }

    private static func satisfiedWaiters(_ state: inout Recorder) -> [CheckedContinuation<Bool, Never>] {
        guard !state.waiters.isEmpty else { return [] }
        var ready: [CheckedContinuation<Bool, Never>] = []
        for (id, waiter) in state.waiters where waiter.condition(state.recorded) {
            ready.append(waiter.continuation)
            state.waiters[id] = nil
        }
        return ready
    }

    // MARK: Waiting

    /// Waits until `condition` holds for what has been recorded, failing after ``deadline``
    /// or when the stream ends without it.
    public func waitUntil(
        _ what: @autoclosure () -> String,
        timeout: Duration = WatchSession.deadline,
        _ condition: @escaping @Sendable (Recorded) -> Bool
    ) async throws {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            if Task.isCancelled { return }
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: false)
        }
        let satisfied = await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool? in
                if condition(state.recorded) { return true }
                if state.recorded.isFinished { return false }
                state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        timer.cancel()
        if !satisfied {
            let (finished, tail) = state.withLock { state in
                (state.recorded.isFinished, state.recorded.events.suffix(12).map(\.description).joined(separator: "\n  "))
            }
            let reason = finished ? "the stream ended" : "timed out after \(timeout)"
            throw ConformanceFailure("\(reason) waiting for \(what()); last events:\n  \(tail)")
        }
    }

    /// Waits until `isDone` holds for what `tally` has gathered from the events recorded from
    /// `index` on, each event handed to `tally` once, as it arrives.
    ///
    /// For a condition over many events (every file of a burst settled): tested with
    /// ``waitUntil(_:timeout:_:)`` against all events after each batch, it costs the square of
    /// their number, and a watch that keeps up with its writer sends batches of one event.
    public func waitUntil<Tally: Sendable>(
        _ what: @autoclosure () -> String,
        from index: Int = 0,
        tallying initial: Tally,
        _ tally: @escaping @Sendable (inout Tally, FileSystemEvent) -> Void,
        until isDone: @escaping @Sendable (Tally) -> Bool
    ) async throws {
        try await waitTallying(what(), from: index, initial, { tally(&$0, $1.events[$2]) }, until: isDone)
    }

    /// Waits for an event matching `predicate`, among those recorded from `index` on.
    public func waitForEvent(
        _ what: @autoclosure () -> String,
        from index: Int = 0,
        _ predicate: @escaping @Sendable (FileSystemEvent) -> Bool
    ) async throws {
        try await waitForRecordedEvent(what(), from: index) { event, _ in predicate(event) }
    }

    /// Waits for an event from `index` on that, with what the consumer read on it, satisfies
    /// `predicate`.
    private func waitForRecordedEvent(
        _ what: String,
        from index: Int,
        _ predicate: @escaping @Sendable (FileSystemEvent, ContentObservation?) -> Bool
    ) async throws {
        try await waitTallying(what, from: index, false, { found, state, position in
            if !found {
                found = predicate(state.events[position], position < state.observations.count ? state.observations[position] : nil)
            }
        }, until: { $0 })
    }

    /// The one loop under ``waitUntil(_:from:tallying:_:until:)`` and
    /// ``waitForEvent(_:from:_:)``: `tally` is handed each position of ``Recorded/events`` from
    /// `index` on once, after each batch (a burst has tens of thousands of events).
    private func waitTallying<Tally: Sendable>(
        _ what: String,
        from index: Int,
        _ initial: Tally,
        _ tally: @escaping @Sendable (inout Tally, Recorded, Int) -> Void,
        until isDone: @escaping @Sendable (Tally) -> Bool
    ) async throws {
        let progress = Mutex((scanned: index, tally: initial))
        try await waitUntil(what) { state in
            progress.withLock { progress in
                while progress.scanned < state.events.count {
                    tally(&progress.tally, state, progress.scanned)
                    progress.scanned += 1
                }
                return isDone(progress.tally)
            }
        }
    }

    /// Creates a marker file in `directory` and waits for its `created` event. Every change
    /// made before the marker has then been reported: kernel queues are ordered, and a scan
    /// that lists the marker reads everything else after it.
    ///
    /// The event that counts is one after which the consumer read the marker's whole content:
    /// the write comes after the `open` that creates the file, so a fast watch can tell the
    /// creation, and the consumer read the file, in between. A `modified` must then follow,
    /// and the replay checked at the first event would find the marker's content unannounced.
    public func sync(in directory: RelativePath = .root) async throws {
        let number = tree.uniqueNumber()
        let marker = directory / RelativePath(Self.markerPrefix + String(number))
        let content = "sync \(number)"
        let start = eventCount
        try tree.write(marker, content)
        try await waitForMarker(tree.absolute(marker, in: .root), content: content, named: "the marker \(marker)", from: start)
    }

    /// Waits for a `created` or `modified` of `path` after which the consumer had read `content`.
    private func waitForMarker(_ path: [UInt8], content: String, named what: String, from index: Int) async throws {
        let expected = DiskTree.contentHash(Array(content.utf8))
        try await waitForRecordedEvent(what, from: index) { event, observed in
            (event.kind == .created || event.kind == .modified) && event.path.bytes == path && observed?.hash == expected
        }
    }

    /// One marker for several watches of the same tree, waited for in each, so none of them
    /// is left behind by a marker only the others have seen.
    public static func sync(_ sessions: [WatchSession], in directory: RelativePath = .root) async throws {
        guard let tree = sessions.first?.tree else { return }
        let marker = directory / RelativePath(markerPrefix + String(tree.uniqueNumber()))
        let markerPath = tree.absolute(marker, in: .root)
        let starts = sessions.map(\.eventCount)
        try tree.write(marker, "sync")
        for (session, start) in zip(sessions, starts) {
            try await session.waitForMarker(markerPath, content: "sync", named: "the marker \(marker)", from: start)
        }
    }

    /// The name prefix of the harness's marker files and queue directories;
    /// ``scenarioEvents(from:)`` leaves out events of any path with a component that starts with it.
    public static let markerPrefix = ".filewatch-sync-"

    // MARK: Consumer control

    /// Stops consuming (the source's buffer fills, and a kernel queue overflows behind it).
    public func pause() {
        state.withLock { $0.isPaused = true }
    }

    /// Holds the consumer with `count` events queued ahead of whatever the scenario does next,
    /// so the backend reads the scenario's events only after the tree has changed beneath
    /// them: the consumer stops, its buffer fills (give the watch a small `bufferLimit`), and
    /// the kernel queue holds the rest. Creates `count` files in a directory of their own that
    /// is watched before the consumer stops; ``resume()`` releases.
    public func hold(queuing count: Int) async throws {
        let number = tree.uniqueNumber()
        let directory = RelativePath(Self.markerPrefix + "queue-\(number)")
        try tree.makeDirectory(directory)
        try await sync(in: directory)
        pause()
        for index in 0..<count {
            try tree.write(directory / RelativePath("q\(index)"))
        }
    }

    /// Lets the consumer go on after ``pause()`` or ``hold(queuing:)``.
    public func resume() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.isPaused = false
            let continuation = state.resume
            state.resume = nil
            return continuation
        }
        continuation?.resume()
    }

    private func waitWhilePaused() async {
        await withCheckedContinuation { continuation in
            let proceed = state.withLock { state -> Bool in
                guard state.isPaused else { return true }
                state.resume = continuation
                return false
            }
            if proceed { continuation.resume() }
        }
    }

    /// Ends the watch and waits until the source has closed its descriptors.
    public func stop() async {
        await stream.stop()
        let task = consumer.withLock { $0 }
        await task?.value
    }

    /// How long a watch may take to stop before the harness calls it a hang.
    public static let stopDeadline: Duration = .seconds(20)

    /// Stops the watch, but waits at most `deadline`: a backend that hangs must fail its
    /// scenario, not stall the whole suite. Returns whether the watch stopped in time.
    public func stop(within deadline: Duration) async -> Bool {
        let outcome = FirstOutcome()
        return await withCheckedContinuation { continuation in
            outcome.set(continuation)
            Task { [self] in
                await stop()
                outcome.resume(true)
            }
            Task {
                try? await Task.sleep(for: deadline)
                outcome.resume(false)
            }
        }
    }

    /// Waits for the stream to end by itself (after `rootRemoved`).
    public func waitForEnd() async throws {
        try await waitUntil("the stream to end") { $0.isFinished }
    }

    // MARK: Inspection

    /// Every event recorded since `ready`, in order, the harness's markers included.
    public var events: [FileSystemEvent] { state.withLock { $0.recorded.events } }

    /// What the consumer read when it received each event (aligned with ``events``).
    public var observations: [ContentObservation?] { state.withLock { $0.recorded.observations } }

    /// How many events have been recorded: pass it as `from` to wait only for later ones.
    public var eventCount: Int { state.withLock { $0.recorded.events.count } }
    /// Every diagnostic recorded so far.
    public var diagnostics: [FileSystemWatchDiagnostic] { state.withLock { $0.recorded.diagnostics } }
    /// Whether the stream has ended.
    public var isFinished: Bool { state.withLock { $0.recorded.isFinished } }
    /// Events that arrived before `ready`: the contract allows none, and
    /// ``assertReplayMatchesDisk(_:)`` fails when there are any.
    public var eventsBeforeReady: [FileSystemEvent] { state.withLock { $0.eventsBeforeReady } }

    /// Events other than the harness's own markers, from `index` on.
    public func scenarioEvents(from index: Int = 0) -> [FileSystemEvent] {
        let all = events
        return all[min(index, all.count)...].filter { !Self.isMarker($0.path) && !Self.isMarker($0.previousPath) }
    }

    /// Whether `path` names one of the harness's marker files. On bytes: `FilePath`'s
    /// component parsing costs about 0.4 ms a call in a debug build, and this runs for every
    /// event of a burst.
    static func isMarker(_ path: FilePath?) -> Bool {
        guard let path else { return false }
        return isMarkerName(path.bytes)
    }

    /// True for a marker, a queue filler directory (``hold(queuing:)``) and anything in one:
    /// any component that starts with the marker prefix.
    static func isMarkerName(_ path: [UInt8]) -> Bool {
        var start = 0
        while start < path.count {
            if path[start...].starts(with: markerPrefixBytes) { return true }
            guard let slash = path[start...].firstIndex(of: UInt8(ascii: "/")) else { return false }
            start = slash + 1
        }
        return false
    }

    private static let markerPrefixBytes = Array(markerPrefix.utf8)

    /// The tree on disk as this watch should see it (recursion and filters applied), below
    /// the first root.
    public func readDisk() -> DiskTree {
        readDisks()[0]
    }

    /// The trees on disk below every root, in the order of the options' roots.
    public func readDisks() -> [DiskTree] {
        let filter = options.filter
        return rootBytes.map { root in
            DiskTree.read(root: root, recursive: options.isRecursive, followsFileLinks: options.followsSymlinks) { path, isDirectory in
                filter.admits(relativePath: path.bytes, name: path.name.bytes, isDirectory: isDirectory)
            }
        }
    }

    /// Replays every event since `ready` on the initial trees, with what the consumer read
    /// for each event.
    public func replay() throws -> ReplayModel {
        guard let initial = initialTrees.withLock({ $0 }) else { throw ConformanceFailure("no initial tree") }
        let (events, observations) = state.withLock { ($0.recorded.events, $0.recorded.observations) }
        var model = ReplayModel(initial: initial, roots: rootBytes.map { FilePath(bytes: $0) })
        for (event, observed) in zip(events, observations) { model.apply(event, observed: observed) }
        return model
    }

    /// The replay invariant: fails with the first differences if replaying the events does
    /// not give the tree on disk, or if any event could not be applied.
    public func assertReplayMatchesDisk(_ context: @autoclosure () -> String = "") throws {
        let before = eventsBeforeReady
        try check(before.isEmpty, "events arrived before ready: \(before.prefix(5))")
        let model = try replay()
        let disk = readDisks()
        var problems = model.anomalies.prefix(10).map { "anomaly: \($0)" }
        problems += model.differences(from: disk).prefix(20)
        if !problems.isEmpty {
            let label = context()
            traceFailure(label: label, problems: problems)
            throw ConformanceFailure(
                "replay invariant broken\(label.isEmpty ? "" : " (\(label))") after \(eventCount) events:\n  "
                    + problems.joined(separator: "\n  ")
                    + "\nlast events (the harness's markers and queue fillers left out):\n  "
                    + scenarioEvents().suffix(40).map(\.description).joined(separator: "\n  ")
            )
        }
    }
}

extension WatchSession {
    /// With FILEWATCH_CONFORMANCE_TRACE set to a directory, a broken replay writes every
    /// event (markers included) and the differences there: the failure message shows only the
    /// last events, and a race is rarely explained by those.
    func traceFailure(label: String, problems: [String]) {
        guard let directory = getenv("FILEWATCH_CONFORMANCE_TRACE").map({ String(cString: $0) }) else { return }
        let events = state.withLock { $0.recorded.events }
        var text = "context: \(label)\n" + problems.joined(separator: "\n") + "\n\nevents:\n"
        for event in events { text += event.description + "\n" }
        // Where a file has several names, a change through a name out of view is one of them.
        text += "\nat ready:" + initialLinkedNames.withLock { $0 } + "\nnow:" + describeLinkedNames()
        let path = FilePath("\(directory)/replay-failure-\(getpid())-\(MonotonicClock.nanoseconds()).log")
        try? WholeFile.replace(path, with: Array(text.utf8))
    }
}

extension WatchSession {
    /// Every name of each file with several names in the roots, whatever the filter, with
    /// its inode number.
    func describeLinkedNames() -> String {
        var text = ""
        for root in rootBytes {
            let everything = DiskTree.read(root: root, recursive: true) { _, _ in true }
            var names: [FileIdentity: [String]] = [:]
            for (path, item) in everything.items where item.type == .file {
                if let identity = item.identity { names[identity, default: []].append(path.description) }
            }
            let linked = names.filter { $0.value.count > 1 }.map { ($0.key.inode, $0.value.sorted()) }.sorted { $0.1[0] < $1.1[0] }
            for (inode, paths) in linked { text += "\n  inode \(inode): " + paths.joined(separator: "  ") }
        }
        return text
    }
}

/// A continuation resumed by whichever of two racers gets there first.
private final class FirstOutcome: Sendable {
    private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ value: Bool) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
