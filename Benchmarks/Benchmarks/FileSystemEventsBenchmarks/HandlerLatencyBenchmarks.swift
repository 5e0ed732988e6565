import Benchmark
import FileSystemEvents
import Foundation
import Synchronization

/// The same create latency as `latency: create`, delivered to a handler on the watch's own
/// thread (`updates(deliveringTo:)`) instead of through the stream to another thread: the
/// difference between the two is the hand-over the handler delivery saves.
///
/// The figure is "Handler latency": from the create's syscall returning to the handler
/// having the event, both read from CLOCK_MONOTONIC (the handler stamps the moment itself).
/// The wall-clock rows also count this thread noticing the handler's flag, which on two
/// shared cores is mostly scheduling.
func registerHandlerLatencyBenchmarks() {
    for backend in BenchmarkBackends.all where backend != .polling {
        let holder = HandlerRigHolder()
        var iteration = 0
        var root: FilePath?
        Benchmark(
            "latency: create, handler delivery (\(backend))",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock, .handlerLatency],
                maxDuration: .seconds(5),
                maxIterations: 2_000,
                wallClockThresholds: BenchmarkThresholds(absolute: [.p50: .microseconds(150), .p90: .microseconds(300)])
            )
        ) { benchmark in
            guard let rig = holder.rig else { return benchmark.error("no watch: setup failed") }
            iteration += 1
            // Idle first, as `latency: create` does: a sample measures the watch waking up.
            usleep(1_000)
            let name = "created-\(iteration).txt"
            rig.expect(name)
            guard create(rig.root.appending(name)) else {
                return benchmark.error("the create itself failed (errno \(errno)); nothing to measure")
            }
            let returned = monotonicNanoseconds()
            benchmark.startMeasurement()
            // The handler runs on the watch's thread; this thread spins on what it records,
            // so the sample ends when the handler has the event, not at a later wake-up here.
            if !rig.waitUntilSeen(seconds: 60) { benchmark.error("the event never reached the handler") }
            benchmark.stopMeasurement()
            let handled = rig.handledAt
            benchmark.measurement(.handlerLatency, handled > returned ? Int(handled - returned) : 0)
        } setup: {
            let scratch = BenchmarkTree.scratch("handler-latency-\(backend)")
            root = scratch
            holder.rig = try HandlerRig(backend: backend, root: scratch)
        } teardown: {
            holder.rig?.stop()
            holder.rig = nil
            if let root { BenchmarkTree.remove(root) }
        }
    }
}

final class HandlerRigHolder {
    var rig: HandlerRig?
}

/// A watch whose handler flags the arrival of the `created` event for an expected name.
final class HandlerRig: Sendable {
    let root: FilePath
    private let expected = Mutex<String?>(nil)
    private let seen = Atomic<Bool>(false)
    private let handled = Atomic<UInt64>(0)
    private let ready = Atomic<Bool>(false)
    private let stream = Mutex<FileSystemEventStream?>(nil)

    init(backend: FileSystemEventBackend, root: FilePath) throws {
        self.root = root
        let source = try backend.makeSource(options: BenchmarkBackends.options(root))
        let made = source.updates(deliveringTo: { [weak self] update in self?.handle(update) })
        stream.withLock { $0 = made }
        let deadline = ContinuousClock.now + .seconds(120)
        while !ready.load(ordering: .acquiring) {
            guard ContinuousClock.now < deadline else { throw BenchmarkFailure("the watch never became ready") }
            usleep(1_000)
        }
    }

    private func handle(_ update: FileSystemWatchUpdate) {
        switch update {
        case .ready:
            ready.store(true, ordering: .releasing)
        case .events(let events):
            guard let name = expected.withLock({ $0 }) else { return }
            if events.contains(where: { $0.kind == .created && $0.path.lastComponent?.string == name }) {
                handled.store(monotonicNanoseconds(), ordering: .relaxed)
                seen.store(true, ordering: .releasing)
            }
        default:
            break
        }
    }

    /// When the handler had the expected event (CLOCK_MONOTONIC, ns).
    var handledAt: UInt64 { handled.load(ordering: .acquiring) }

    func expect(_ name: String) {
        seen.store(false, ordering: .releasing)
        expected.withLock { $0 = name }
    }

    func waitUntilSeen(seconds: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var spins = 0
        while !seen.load(ordering: .acquiring) {
            spins &+= 1
            // Yield now and then: on two cores the watch's thread may be queued behind this
            // one, and a pure spin would hold it off until the scheduler's tick.
            if spins & 0x3F == 0 { sched_yield() }
            if spins & 0xFFFF == 0, ContinuousClock.now > deadline { return false }
        }
        return true
    }

    /// Ends the watch and returns once its producer has closed its descriptors (the stream of
    /// a handler delivery yields nothing, and ends then).
    func stop() {
        guard let stream = stream.withLock({ $0 }) else { return }
        stream.finish()
        var iterator = stream.makeBlockingIterator()
        while (try? iterator.next()) != nil {}
    }
}

extension BenchmarkMetric {
    static var handlerLatency: BenchmarkMetric { .custom("Handler latency (ns)", polarity: .prefersSmaller, useScalingFactor: false) }
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
