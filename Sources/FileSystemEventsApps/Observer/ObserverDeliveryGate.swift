import PlatformLibc
import Dispatch
import Synchronization

/// What makes ``FileSystemObserver/stop()`` final: every handler call passes through here, and
/// closing the gate both refuses the calls still queued and waits for those already running.
///
/// Each ``open()`` starts a new generation; a delivery carries the generation it was made for
/// and runs only while that generation is current. So a queued update of a stopped watch (or
/// of the watch before a restart) is dropped when its turn comes, with no need to find and
/// cancel it in the queue.
final class ObserverDeliveryGate: Sendable {
    struct Admission: Sendable {
        fileprivate let generation: UInt64
    }

    private struct State: ~Copyable {
        var generation: UInt64 = 0
        /// The threads running a handler now (a concurrent queue may run several).
        var delivering: [pthread_t] = []
        var closeWaiters: [DispatchSemaphore] = []
    }

    private let state = Mutex<State>(State())

    /// A new generation: deliveries admitted by it run until the next ``close()``.
    func open() -> Admission {
        state.withLock { state in
            state.generation &+= 1
            return Admission(generation: state.generation)
        }
    }

    /// Refuses every delivery admitted so far. Call it under the same lock as ``open()``, so
    /// that a `start()` racing a `stop()` cannot have its fresh generation closed by the stop.
    func invalidate() {
        state.withLock { $0.generation &+= 1 }
    }

    /// Returns once the handlers running on other threads have returned. A handler running on
    /// the calling thread (``FileSystemObserver/stop()`` called from inside it) is not waited
    /// for: it is the caller.
    func waitForRunningDeliveries() {
        let me = pthread_self()
        while true {
            let semaphore = DispatchSemaphore(value: 0)
            let mustWait = state.withLock { state -> Bool in
                guard state.delivering.contains(where: { pthread_equal($0, me) == 0 }) else { return false }
                state.closeWaiters.append(semaphore)
                return true
            }
            guard mustWait else { return }
            semaphore.wait()
        }
    }

    /// Runs `body` where `delivery` says, if `admission` is still current when it gets there.
    func deliver(_ admission: Admission, on delivery: FileSystemObserver.Delivery, _ body: @escaping @Sendable () -> Void) {
        switch delivery {
        case .watchThread:
            run(admission, body)
        case .queue(let queue):
            queue.async { self.run(admission, body) }
        }
    }

    private func run(_ admission: Admission, _ body: () -> Void) {
        let me = pthread_self()
        let admitted = state.withLock { state -> Bool in
            guard state.generation == admission.generation else { return false }
            state.delivering.append(me)
            return true
        }
        guard admitted else { return }
        body()
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            if let index = state.delivering.firstIndex(where: { pthread_equal($0, me) != 0 }) {
                state.delivering.remove(at: index)
            }
            let waiters = state.closeWaiters
            state.closeWaiters = []
            return waiters
        }
        for waiter in waiters { waiter.signal() }
    }
}
