import FileSystemEvents
import Foundation
import Synchronization

/// A live watch a benchmark drives: make a change, then wait for its event.
///
/// Synchronous on purpose: package-benchmark runs async closures by parking a thread of the
/// cooperative pool, which on two cores can leave none to run them. The stream's blocking
/// iterator keeps the measurement off the pool entirely.
final class WatchRig {
    let root: FilePath
    private var stream: FileSystemEventStream?
    private var iterator: FileSystemEventStream.BlockingIterator
    private let deadline = WaitDeadline()
    private let watchdog: DispatchSourceTimer

    init(backend: FileSystemEventBackend, root: FilePath, configure: (inout WatchOptions) -> Void = { _ in }) throws {
        self.root = root
        var options = BenchmarkBackends.options(root)
        configure(&options)
        let source = try backend.makeSource(options: options)
        let stream = source.updates()
        self.stream = stream
        iterator = stream.makeBlockingIterator()
        // A benchmark must fail, not hang, when an event never comes. One timer per watch,
        // armed once: arming one per wait would put a timer registration inside every
        // measured latency sample. Past the deadline it ends the watch, the blocking iterator
        // returns nil, and the wait throws.
        watchdog = DispatchSource.makeTimerSource(queue: .global())
        watchdog.setEventHandler { [deadline] in
            if deadline.hasPassed { stream.finish() }
        }
        watchdog.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        watchdog.resume()
        while let update = try iterator.next() {
            if case .ready = update { break }
        }
    }

    /// Waits until an event satisfying `predicate` arrives.
    func waitFor(_ predicate: (FileSystemEvent) -> Bool) throws {
        deadline.start(seconds: 60)
        defer { deadline.clear() }
        while let update = try iterator.next() {
            if case .events(let events) = update, events.contains(where: predicate) { return }
        }
        throw BenchmarkFailure("the watch ended (or timed out) before the expected event")
    }

    /// Waits until `count` events satisfying `predicate` have arrived.
    func waitFor(count: Int, _ predicate: (FileSystemEvent) -> Bool) throws {
        deadline.start(seconds: 120)
        defer { deadline.clear() }
        var remaining = count
        while remaining > 0, let update = try iterator.next() {
            if case .events(let events) = update {
                remaining -= events.reduce(0) { $0 + (predicate($1) ? 1 : 0) }
            }
        }
        if remaining > 0 { throw BenchmarkFailure("\(remaining) of \(count) events never arrived") }
    }

    deinit { watchdog.cancel() }

    /// Ends the watch (its producer closes its descriptors as it exits).
    func stop() {
        watchdog.cancel()
        stream?.finish()
        stream = nil
        while (try? iterator.next()) != nil {}
    }

    func path(_ name: String) -> FilePath { root.appending(name) }
}

/// When the current wait gives up (monotonic nanoseconds; 0 while nothing waits).
private final class WaitDeadline: Sendable {
    private let nanoseconds = Atomic<UInt64>(0)

    func start(seconds: UInt64) {
        nanoseconds.store(DispatchTime.now().uptimeNanoseconds + seconds * 1_000_000_000, ordering: .relaxed)
    }

    func clear() { nanoseconds.store(0, ordering: .relaxed) }

    var hasPassed: Bool {
        let deadline = nanoseconds.load(ordering: .relaxed)
        return deadline != 0 && DispatchTime.now().uptimeNanoseconds > deadline
    }
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
