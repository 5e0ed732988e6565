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

    init(backend: FileSystemEventBackend, root: FilePath, configure: (inout WatchOptions) -> Void = { _ in }) throws {
        self.root = root
        var options = BenchmarkBackends.options(root)
        configure(&options)
        let source = try backend.makeSource(options: options)
        let stream = source.updates()
        self.stream = stream
        iterator = stream.makeBlockingIterator()
        while let update = try iterator.next() {
            if case .ready = update { break }
        }
    }

    /// Waits until an event satisfying `predicate` arrives.
    func waitFor(_ predicate: (FileSystemEvent) -> Bool) throws {
        let deadline = endWatch(after: .seconds(60))
        defer { deadline.cancel() }
        while let update = try iterator.next() {
            if case .events(let events) = update, events.contains(where: predicate) { return }
        }
        throw BenchmarkFailure("the watch ended (or timed out) before the expected event")
    }

    /// Waits until `count` events satisfying `predicate` have arrived.
    func waitFor(count: Int, _ predicate: (FileSystemEvent) -> Bool) throws {
        let deadline = endWatch(after: .seconds(120))
        defer { deadline.cancel() }
        var remaining = count
        while remaining > 0, let update = try iterator.next() {
            if case .events(let events) = update {
                remaining -= events.reduce(0) { $0 + (predicate($1) ? 1 : 0) }
            }
        }
        if remaining > 0 { throw BenchmarkFailure("\(remaining) of \(count) events never arrived") }
    }

    /// A benchmark must fail, not hang, when an event never comes: past `delay` this ends the
    /// watch, the blocking iterator returns nil, and the wait throws.
    private func endWatch(after delay: Duration) -> DispatchWorkItem {
        let stream = self.stream
        let item = DispatchWorkItem { stream?.finish() }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(delay.components.seconds)), execute: item)
        return item
    }

    /// Ends the watch (its producer closes its descriptors as it exits).
    func stop() {
        stream?.finish()
        stream = nil
        while (try? iterator.next()) != nil {}
    }

    func path(_ name: String) -> FilePath { root.appending(name) }
}

/// Keeps one rig alive from a benchmark's `setup` to its `teardown`, across its iterations.
final class WatchRigHolder {
    var rig: WatchRig?

    func stop() {
        rig?.stop()
        rig = nil
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
