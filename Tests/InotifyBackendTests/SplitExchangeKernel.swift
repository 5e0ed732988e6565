#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Synchronization
import SystemPackage

/// The real kernel, except that an exchange's second move pair arrives late: whenever a read
/// ends with the mirror of a move pair it holds (an exchange's second pair, and its
/// `IN_MOVE_SELF`), that mirror is held back for `delay`, during which the queue looks empty.
/// That is what a reader sees when `renameat2(RENAME_EXCHANGE)` is preempted between queueing
/// its two pairs, which on a loaded machine lasts milliseconds.
///
/// An exchange with a place out of view (outside the root, below a depth limit) shows only one
/// event of each pair, at the same name: `IN_MOVED_TO` of the item that came in, then
/// `IN_MOVED_FROM` of the one that left, when the item out of view was the first argument.
/// A read that ends with such a second half (and its `IN_MOVE_SELF`) is split before it too.
///
/// Only what the kernel could show is shown. The exchange is on disk before either pair is
/// queued, so a reader may find the disk swapped and only the first pair queued; events that
/// other threads queue in that window come between the pairs (so some may stand between them
/// in the read). But a change that is on disk once its system call has returned has its
/// event queued: so a read with anything after the mirror is not split (what follows happened
/// after the second pair was queued), a plain rename followed by another is not split, and
/// the hold ends as soon as the real kernel queues anything more (the thread that was
/// preempted has queued its second pair before it could do anything else).
struct SplitExchangeKernel: RealKernelWrapper {
    /// Exchanges split so far, by every kernel of this kind: a scenario that split none
    /// tested nothing here.
    static let splits = Atomic<Int>(0)

    var real: RawInotifyKernel
    private let delay: Duration
    private var held: [Inotify.Event] = []
    private var releaseAt: ContinuousClock.Instant?

    init(delay: Duration) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.delay = delay
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        if let releaseAt {
            guard ContinuousClock.now >= releaseAt || real.hasPendingEvents() else { return .failure(.resourceTemporarilyUnavailable) }
            // Released: the held pair, then whatever the kernel queued behind it.
            self.releaseAt = nil
            events += held
            held = []
            _ = real.read(into: &events, maximumBytes: maximumBytes)
            return .success(())
        }
        var read: [Inotify.Event] = []
        let result = real.read(into: &read, maximumBytes: maximumBytes)
        guard case .success = result else { return result }
        if let split = Self.splitPoint(in: read) {
            events += read[..<split]
            held = Array(read[split...])
            releaseAt = ContinuousClock.now + delay
            Self.splits.add(1, ordering: .relaxed)
        } else {
            events += read
        }
        return .success(())
    }

    /// Where the read's closing mirror pair starts, if it ends with the second pair of an
    /// exchange whose first pair it holds.
    private static func splitPoint(in events: [Inotify.Event]) -> Int? {
        var end = events.endIndex
        while end > events.startIndex && events[end - 1].name.isEmpty && events[end - 1].mask.contains(.moveSelf) { end -= 1 }
        if end - events.startIndex >= 2 {
            let arrived = events[end - 2]
            let left = events[end - 1]
            if arrived.mask.contains(.movedTo), left.mask.contains(.movedFrom), arrived.cookie != left.cookie,
               arrived.watch == left.watch, arrived.name == left.name,
               !events[..<(end - 2)].contains(where: { $0.mask.contains(.movedFrom) && $0.cookie == arrived.cookie }) {
                return end - 1
            }
        }
        guard end - events.startIndex >= 4 else { return nil }
        let third = events[end - 2]
        let fourth = events[end - 1]
        guard third.mask.contains(.movedFrom), fourth.mask.contains(.movedTo), third.cookie == fourth.cookie else { return nil }
        var index = end - 3
        while index > events.startIndex {
            let from = events[index - 1]
            let to = events[index]
            if from.mask.contains(.movedFrom) && to.mask.contains(.movedTo) && from.cookie == to.cookie
                && third.watch == to.watch && third.name == to.name && fourth.watch == from.watch && fourth.name == from.name {
                return end - 2
            }
            index -= 1
        }
        return nil
    }

    /// While the second pair is held back, the kernel has not queued it yet: nothing waits,
    /// unless the kernel has queued more since (which ends the hold).
    func hasPendingEvents() -> Bool {
        if let releaseAt { return ContinuousClock.now >= releaseAt || real.hasPendingEvents() }
        return real.hasPendingEvents()
    }

}
#endif
