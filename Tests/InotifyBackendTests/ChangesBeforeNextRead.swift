#if os(Linux)
import Synchronization

/// Changes a test kernel makes just before the watch's next read, so the watch reads their
/// events together, as it does when they come faster than it reads. The test hands them over,
/// then wakes the watch with a change of its own (a file written in the tree), whose read
/// finds them queued behind it.
final class ChangesBeforeNextRead: Sendable {
    private let waiting = Mutex<(@Sendable () -> Void)?>(nil)

    func make(_ change: @escaping @Sendable () -> Void) {
        waiting.withLock { $0 = change }
    }

    /// Makes the changes handed over, if any: the kernel's `read` calls this first.
    func makeWaiting() {
        let change = waiting.withLock { waiting in
            defer { waiting = nil }
            return waiting
        }
        change?()
    }
}
#endif
