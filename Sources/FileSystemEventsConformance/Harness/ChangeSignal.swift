import Synchronization

/// "Something changed", for a test that waits on a condition with a deadline instead of a
/// sleep: read ``generation``, check the condition, and if it does not hold yet, wait for a
/// change after that generation. Any change after the read ends the wait at once, so none is
/// missed between the check and the wait.
package final class ChangeSignal: Sendable {
    private let state = Mutex<(generation: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    package init() {}

    package var generation: Int { state.withLock { $0.generation } }

    /// Records a change and wakes every waiter.
    package func notify() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once a change after generation `seen` happened, or at `deadline`.
    package func wait(after seen: Int, until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                await withCheckedContinuation { continuation in
                    let current = state.withLock { state -> Bool in
                        if state.generation != seen { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if current { continuation.resume() }
                }
            }
            group.addTask {
                // The wait's deadline; a change ends it first.
                try? await Task.sleep(until: deadline)
            }
            await group.next()
            group.cancelAll()
            // Releases the continuation the deadline left waiting.
            self.notify()
        }
    }
}
