import Dispatch
import FileSystemEventsCore
import Synchronization

/// Runs several writers at once, each on a thread of its own, and waits for all of them.
///
/// One writer at full speed already outruns a watcher, but its changes still land in one
/// order that its own next call waits for. Two writers on overlapping directories make the
/// orders no single thread can: a file created in a directory at the very moment another
/// thread renames that directory, an exchange between two creations of one `mkdir -p`. The
/// writers start together (each spins until all are running), and the wait happens off the
/// cooperative pool, so the watch's consumer keeps reading meanwhile.
enum ConcurrentWriters {
    static func run(_ writers: [@Sendable () -> Void]) async throws {
        let started = Atomic<Int>(0)
        let group = DispatchGroup()
        for writer in writers {
            group.enter()
            // A thread each: a dispatch queue could run two writers one after the other on one
            // thread, and then they would take turns instead of racing.
            let running = ProducerThread.start {
                started.add(1, ordering: .acquiringAndReleasing)
                while started.load(ordering: .acquiring) < writers.count {}
                writer()
                group.leave()
            }
            if !running {
                started.add(writers.count, ordering: .acquiringAndReleasing)  // let any started one go
                group.leave()
                await wait(group)
                throw ConformanceFailure("could not start a writer thread")
            }
        }
        await wait(group)
    }

    private static func wait(_ group: DispatchGroup) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }
}
