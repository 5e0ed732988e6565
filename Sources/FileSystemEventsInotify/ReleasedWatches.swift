#if os(Linux)
import FileSystemEventsCore

/// Watches the model no longer holds, to be removed from the kernel a batch at a time, each
/// batch just before a read of the queue.
///
/// `inotify_rm_watch` queues an `IN_IGNORED` for every watch it removes. A subtree moved out of
/// view is unwatched at once, one removal per directory, while the watch is busy applying the
/// move rather than reading: a 20,000-directory subtree moved out queued 20,000 events, past
/// the 16,384 of `fs.inotify.max_queued_events`, and the queue overflowed into a rescan of the
/// whole tree (`filewatch` printed an overflow warning for a plain `mv`). Removed a batch per
/// read, the queue holds at most a batch of them, read by the read that follows. Until it is
/// removed, a watch's events find no target and are dropped, as those it queued before.
package struct ReleasedWatches {
    private var watches: [CInt] = []
    private var next = 0

    var isEmpty: Bool { next == watches.count }

    mutating func append(_ watch: CInt) {
        watches.append(watch)
    }

    /// Takes the next `count` watches at most, oldest first.
    mutating func take(atMost count: Int) -> ArraySlice<CInt> {
        let end = min(watches.count, next + count)
        let batch = watches[next..<end]
        next = end
        if next == watches.count {
            watches.removeAll(keepingCapacity: watches.count <= 1024)
            next = 0
        }
        return batch
    }

    /// A quarter of the kernel's queue limit (at most 4,096, at least 16), so that a batch's
    /// `IN_IGNORED` events leave room for everything else that happens before the next read.
    package static let batchSize: Int = max(16, min(4096, (InotifyLimits.current("max_queued_events") ?? 16_384) / 4))
}
#endif
