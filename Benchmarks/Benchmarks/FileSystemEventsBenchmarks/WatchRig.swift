import FileSystemEvents
import Foundation

/// A live watch a benchmark drives: make a change, then wait for its event.
///
/// Synchronous on purpose: package-benchmark runs async closures by parking a thread of the
/// cooperative pool, which on two cores can leave none to run them. The stream's blocking
/// iterator keeps the measurement off the pool entirely.
final class WatchRig {
    let root: FilePath
    private var stream: FileSystemEventStream?
    private var iterator: FileSystemEventStream.BlockingIterator

    init(backend: FileSystemEventBackend, root: FilePath) throws {
        self.root = root
        let source = try backend.makeSource(options: BenchmarkBackends.options(root))
        let stream = source.updates()
        self.stream = stream
        iterator = stream.makeBlockingIterator()
        while let update = try iterator.next() {
            if case .ready = update { break }
        }
    }

    /// Waits until an event satisfying `predicate` arrives.
    func waitFor(_ predicate: (FileSystemEvent) -> Bool) throws {
        while let update = try iterator.next() {
            if case .events(let events) = update, events.contains(where: predicate) { return }
        }
        throw BenchmarkFailure("the watch ended before the expected event")
    }

    /// Waits until `count` events satisfying `predicate` have arrived.
    func waitFor(count: Int, _ predicate: (FileSystemEvent) -> Bool) throws {
        var remaining = count
        while remaining > 0, let update = try iterator.next() {
            if case .events(let events) = update {
                remaining -= events.reduce(0) { $0 + (predicate($1) ? 1 : 0) }
            }
        }
        if remaining > 0 { throw BenchmarkFailure("\(remaining) of \(count) events never arrived") }
    }

    /// Ends the watch (its producer closes its descriptors as it exits).
    func stop() {
        stream?.finish()
        stream = nil
        while (try? iterator.next()) != nil {}
    }

    func path(_ name: String) -> FilePath { root.appending(name) }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
