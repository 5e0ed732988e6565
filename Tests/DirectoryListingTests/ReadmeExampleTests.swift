import FileSystemEvents
import FileSystemEventsConformance
import Observation
import Synchronization
import Testing

/// The README's folder view model, verbatim but for the directory, so the example compiles
/// and does what the README says: Start, Stop, changes while stopped, Restart.
@MainActor @Observable final class FolderModel {
    var entries: [DirectoryEntry] = []
    var problem: (any Error)?
    private var task: Task<Void, Never>?
    let listing: DirectoryListing

    init(directory: FilePath) {
        listing = DirectoryListing(directory: directory, options: .init(sortOrder: .modificationTime), backend: .polling)
    }

    func start() {  // a restart first brings `entries` up to date with what changed while stopped
        let updates = entries.isEmpty ? listing : listing.resuming(from: entries)
        task = Task { do { for try await update in updates { entries = update.entries } } catch { problem = error } }
    }
    func stop() { task?.cancel() }
}

@MainActor
struct ReadmeExampleTests {
    @Test("the README's folder model: start, stop, restart")
    func folderModel() async throws {
        let tree = try ScratchTree()
        try tree.write("first", "1")
        let model = FolderModel(directory: tree.root)
        model.start()
        try await Self.waitUntil("the first entry", model) { model.entries.map(\.name) == ["first"] }
        model.stop()
        try tree.write("while-stopped", "2")
        model.start()
        try await Self.waitUntil("the change made while stopped", model) { model.entries.map(\.name).contains("while-stopped") }
        #expect(model.problem == nil, "\(String(describing: model.problem))")
        model.stop()
    }

    /// Waits for the model to change (Observation's tracking, as a view would) until
    /// `condition` holds, or the deadline passes.
    static func waitUntil(_ what: String, _ model: FolderModel, _ condition: @MainActor () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ConformanceFailure("timed out waiting for \(what)") }
            let signal = OneShot()
            withObservationTracking {
                _ = model.entries
                _ = model.problem
            } onChange: {
                signal.fire()
            }
            let timer = Task {
                try? await Task.sleep(until: deadline)  // the deadline of this wait, not a pause
                signal.fire()
            }
            await signal.wait()
            timer.cancel()
        }
    }
}

/// A wakeup that fires once, whoever fires it first (a change or the deadline).
final class OneShot: Sendable {
    private let state = Mutex<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func fire() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.fired = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if state.fired { return true }
                state.waiter = continuation
                return false
            }
            if fired { continuation.resume() }
        }
    }
}
