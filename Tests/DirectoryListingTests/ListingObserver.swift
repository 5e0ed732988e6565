import FileSystemEvents
import FileSystemEventsConformance
import Synchronization

/// Plays the app: iterates a listing in a task of its own, applies every update to its own copy
/// of the list (checking both `applying(difference)` and the batch-update recipe against the
/// list the update carries), and lets the test wait, with a deadline, for that copy to reach a
/// condition. Waiting is for the next update or the deadline, never a sleep.
final class ListingObserver: Sendable {
    struct State {
        var list: [DirectoryEntry] = []
        var updates: [DirectoryListingUpdate] = []
        var endReason: DirectoryListing.EndReason?
        var finished = false
        var error: FileSystemEventsError?
        var violations: [String] = []
    }

    let listing: DirectoryListing
    private let state: Mutex<State>
    private let changes = ChangeSignal()
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// A stalled app: after the first update, the observer stops asking for more until released.
    private let gate = Mutex<(isOpen: Bool, waiter: CheckedContinuation<Void, Never>?)>((true, nil))

    /// Starts the listing from nothing, or from `previous` (a restart). With
    /// `stallsAfterFirstUpdate`, the app takes no update after the first until ``release()``.
    init(_ listing: DirectoryListing, resumingFrom previous: [DirectoryEntry]? = nil, stallsAfterFirstUpdate: Bool = false) {
        if stallsAfterFirstUpdate { gate.withLock { $0.isOpen = false } }
        self.listing = listing
        var initial = State()
        initial.list = previous ?? []
        state = Mutex(initial)
        let sequence = previous.map { listing.resuming(from: $0) } ?? listing
        let started = Task { [self] in
            do throws(FileSystemEventsError) {
                for try await update in sequence {
                    record(update)
                    await waitAtGate()
                }
            } catch {
                state.withLock { $0.error = error }
            }
            state.withLock { $0.finished = true }
            notify()
        }
        task.withLock { $0 = started }
    }

    private func record(_ update: DirectoryListingUpdate) {
        state.withLock { state in
            switch update {
            case .listing(let entries):
                if !state.updates.isEmpty { state.violations.append("a second full listing") }
                state.list = entries
            case .changes(let changes):
                let previous = state.list
                if previous.applying(changes.difference) != changes.entries {
                    state.violations.append("previous.applying(difference) is not the new list (update \(state.updates.count))")
                }
                var recipe = previous
                for offset in changes.removed.reversed() where offset < recipe.count { recipe.remove(at: offset) }
                for offset in changes.inserted where offset <= recipe.count { recipe.insert(changes.entries[offset], at: offset) }
                for offset in changes.updated where offset < recipe.count { recipe[offset] = changes.entries[offset] }
                if recipe != changes.entries {
                    state.violations.append("removed/inserted/updated do not give the new list (update \(state.updates.count))")
                }
                state.list = changes.entries
                if let reason = changes.endReason { state.endReason = reason }
            }
            state.updates.append(update)
        }
        notify()
    }

    private func waitAtGate() async {
        await withCheckedContinuation { continuation in
            let isOpen = gate.withLock { gate in
                if gate.isOpen { return true }
                gate.waiter = continuation
                return false
            }
            if isOpen { continuation.resume() }
        }
    }

    /// Lets a stalled app take updates again.
    func release() {
        let waiter = gate.withLock { gate in
            gate.isOpen = true
            defer { gate.waiter = nil }
            return gate.waiter
        }
        waiter?.resume()
    }

    private func notify() { changes.notify() }

    var snapshot: State { state.withLock { $0 } }
    var list: [DirectoryEntry] { snapshot.list }

    /// Waits until `condition` holds for the state (re-checked after every update).
    func wait(
        for what: String,
        timeout: Duration = .seconds(60),
        until condition: @escaping @Sendable (State) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = changes.generation
            let current = snapshot
            if !current.violations.isEmpty { throw ConformanceFailure("\(listing.directory): \(current.violations.joined(separator: "; "))") }
            if condition(current) { return }
            if current.finished {
                throw ConformanceFailure("the listing ended (\(current.error.map { "\($0)" } ?? "no error")) before \(what)")
            }
            guard ContinuousClock.now < deadline else {
                throw ConformanceFailure("timed out waiting for \(what); list: \(current.list.map(\.name))")
            }
            await changes.wait(after: seen, until: deadline)
        }
    }

    /// Waits until the app's list shows `marker` and equals a fresh sorted listing of the
    /// directory: the synchronisation point of every scenario.
    func sync(marker: String, timeout: Duration = .seconds(60)) async throws {
        try await wait(for: "the marker \(marker)", timeout: timeout) { $0.list.contains { $0.name == marker } }
        let listing = self.listing
        do {
            // The marker's update may precede a straggler a polling scan saw late; give it until
            // the deadline to converge, and report the difference if it never does.
            try await wait(for: "the list to equal a fresh listing after \(marker)", timeout: .seconds(20)) { state in
                (try? listing.currentEntries()) == state.list
            }
        } catch {
            let fresh = (try? listing.currentEntries()) ?? []
            let mine = self.list
            throw ConformanceFailure(
                "after \(marker): app list \(mine.count) entries, disk \(fresh.count); "
                    + "only in app: \(Set(mine).subtracting(fresh).map(\.description).sorted().prefix(5)); "
                    + "only on disk: \(Set(fresh).subtracting(mine).map(\.description).sorted().prefix(5))")
        }
    }

    /// Waits for the listing's first update.
    func started() async throws {
        try await wait(for: "the first update") { !$0.updates.isEmpty }
    }

    /// Ends the iteration (the app's Stop button) and waits for the task to return.
    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        release()
        await running?.value
    }
}
