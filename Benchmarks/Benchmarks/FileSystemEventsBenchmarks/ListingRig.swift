import Dispatch
import FileSystemEvents
import Foundation
import Synchronization

/// A live `DirectoryListing` a benchmark drives: make a change, then wait for the update that
/// shows it.
///
/// The listing is an async sequence; it runs in a task of its own on the cooperative pool and
/// hands each update over through a semaphore, so the benchmark's measuring thread blocks
/// outside the pool (see `WatchRig` for why). Only the latest update is kept: holding the
/// previous list would make the listing copy its array on the next change, and the benchmark
/// would measure that copy instead of the listing.
final class ListingRig: Sendable {
    let root: FilePath
    private let queue = UpdateQueue()
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(backend: FileSystemEventBackend, root: FilePath, options: DirectoryListing.Options = .init()) throws {
        self.root = root
        let listing = DirectoryListing(directory: root, options: options) { watchOptions throws(FileSystemEventsError) in
            var watchOptions = watchOptions
            watchOptions.pollInterval = BenchmarkBackends.options(root).pollInterval
            return try backend.makeSource(options: watchOptions)
        }
        let started = Task.detached { [queue] in
            do {
                for try await update in listing {
                    queue.updates.withLock { $0.append(update) }
                    queue.arrived.signal()
                }
            } catch {}
            queue.arrived.signal()
        }
        task.withLock { $0 = started }
        guard case .listing = try next(timeout: 600) else { throw BenchmarkFailure("the listing did not start with the whole list") }
    }

    /// The next update, blocking; throws when none comes in time or the listing ended.
    private func next(timeout seconds: Int) throws -> DirectoryListingUpdate {
        guard queue.arrived.wait(timeout: .now() + .seconds(seconds)) == .success else {
            throw BenchmarkFailure("no update within \(seconds) s")
        }
        guard let update = queue.updates.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            throw BenchmarkFailure("the listing ended")
        }
        return update
    }

    /// Waits until an update satisfies `predicate` (given the changes of each update).
    func waitFor(_ predicate: (DirectoryListingChanges) -> Bool) throws {
        while true {
            if case .changes(let changes) = try next(timeout: 120), predicate(changes) { return }
        }
    }

    /// Ends the listing and waits for its task (the listing closes its descriptors first).
    func stop() {
        cancelAndWait(for: task.withLock { $0 })
    }

    func path(_ name: String) -> FilePath { root.appending(name) }
}

/// Cancels `task` and blocks the calling (measuring) thread until it has ended: how a rig
/// stops an async sequence it runs in a task of its own.
func cancelAndWait(for task: Task<Void, Never>?) {
    task?.cancel()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await task?.value
        done.signal()
    }
    done.wait()
}

/// Updates handed from the listing's task to the measuring thread.
private final class UpdateQueue: Sendable {
    let updates = Mutex<[DirectoryListingUpdate]>([])
    let arrived = DispatchSemaphore(value: 0)
}
