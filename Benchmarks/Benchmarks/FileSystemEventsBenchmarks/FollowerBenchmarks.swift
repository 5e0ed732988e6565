import Benchmark
import Dispatch
import FileSystemEvents
import Foundation
import Synchronization

/// `FileFollower` on every backend: append latency (a line's write(2) returning to the
/// follower having its bytes) and throughput following a file appended in 64 KiB writes as fast
/// as this thread can. `scripts/follow-vs-tail.sh` measures the CLI next to GNU `tail -F`
/// through a pipe; these are the library's own figures, without a process or a pipe between.
func registerFollowerBenchmarks() {
    for backend in BenchmarkBackends.all {
        let holder = FollowRigHolder()
        var root: FilePath?
        Benchmark(
            "follow: append latency (\(backend))",
            configuration: benchmarkConfiguration(
                maxDuration: .seconds(5),
                maxIterations: backend == .polling ? 200 : 2_000,
                wallClockThresholds: backend == .polling
                    ? nil : BenchmarkThresholds(absolute: [.p50: .microseconds(200), .p90: .microseconds(400)])
            )
        ) { benchmark in
            guard let rig = holder.rig else { return benchmark.error("no follower: setup failed") }
            // Idle first, as `latency: append` does: a sample measures the follower waking up.
            usleep(1_000)
            guard rig.append(FollowRig.line) else {
                return benchmark.error("the write itself failed (errno \(errno)); nothing to measure")
            }
            benchmark.startMeasurement()
            if !rig.waitUntilDelivered(seconds: 60) { benchmark.error("the line never reached the follower") }
            benchmark.stopMeasurement()
        } setup: {
            let scratch = BenchmarkTree.scratch("follow-latency-\(backend)")
            root = scratch
            holder.rig = try FollowRig(backend: backend, file: scratch.appending("app.log"))
        } teardown: {
            holder.rig?.stop()
            holder.rig = nil
            if let root { BenchmarkTree.remove(root) }
        }
    }

    for backend in BenchmarkBackends.all {
        let megabytes = 256
        var root: FilePath?
        Benchmark(
            "follow: throughput, \(megabytes) MiB in 64 KiB writes (\(backend))",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock, BenchmarkMetrics.mebibytesPerSecond],
                timeUnits: .milliseconds,
                warmupIterations: 1,
                maxDuration: .seconds(20),
                maxIterations: 10
            )
        ) { benchmark in
            guard let root else { return benchmark.error("no scratch directory") }
            let file = root.appending("throughput.log")
            unlink(file.string)
            do {
                // A fresh follower and file per iteration, from the first byte: the sample is
                // the writer's first write to the follower having the last byte.
                let rig = try FollowRig(backend: backend, file: file)
                defer { rig.stop() }
                let block = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 10)
                let start = monotonicNanoseconds()
                benchmark.startMeasurement()
                for _ in 0..<(megabytes * 16) {
                    guard rig.append(block) else { return benchmark.error("write failed (errno \(errno))") }
                }
                if !rig.waitUntilDelivered(seconds: 120) { benchmark.error("the follower fell short of the file's end") }
                benchmark.stopMeasurement()
                let seconds = Double(monotonicNanoseconds() - start) / 1e9
                benchmark.measurement(BenchmarkMetrics.mebibytesPerSecond, Int(Double(megabytes) / seconds))
            } catch {
                benchmark.error("\(error)")
            }
        } setup: {
            root = BenchmarkTree.scratch("follow-throughput-\(backend)")
        } teardown: {
            if let root { BenchmarkTree.remove(root) }
        }
    }
}

/// A live `FileFollower` a benchmark drives: append, then wait until the follower has every
/// byte written so far.
///
/// The follower is an async sequence; it runs in a task of its own and publishes how many bytes
/// it has, and the measuring thread spins on that count outside the cooperative pool (see
/// `WatchRig` for why), so a sample ends when the follower has the bytes, not at a later
/// wake-up of this thread.
final class FollowRig: Sendable {
    static let line = Array("one line of a log, as an application writes it\n".utf8)

    private let descriptor: CInt
    private let progress = FollowProgress()
    private let written = Mutex(0)
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(backend: FileSystemEventBackend, file: FilePath) throws {
        descriptor = open(file.string, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchmarkFailure("open \(file): errno \(errno)") }
        let follower = FileFollower(path: file, options: .init(startPosition: .start)) { options throws(FileSystemEventsError) in
            var options = options
            options.pollInterval = BenchmarkBackends.options(file).pollInterval
            return try backend.makeSource(options: options)
        }
        let started = Task.detached { [progress] in
            do {
                for try await update in follower {
                    if case .data(let chunk) = update { progress.delivered.add(chunk.bytes.count, ordering: .releasing) }
                }
            } catch {}
            progress.ended.store(true, ordering: .releasing)
        }
        task.withLock { $0 = started }
        // Attached once a first line has come through.
        guard append(Self.line), waitUntilDelivered(seconds: 60) else {
            stop()
            throw BenchmarkFailure("the follower did not start")
        }
    }

    /// Appends `bytes` in one write(2); false when it failed or wrote less.
    func append(_ bytes: [UInt8]) -> Bool {
        let done = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard done == bytes.count else { return false }
        written.withLock { $0 += done }
        return true
    }

    /// Spins until the follower has delivered everything appended; false at the deadline or
    /// when the follower ended.
    func waitUntilDelivered(seconds: UInt64) -> Bool {
        let target = written.withLock { $0 }
        let deadline = monotonicNanoseconds() + seconds * 1_000_000_000
        var spins = 0
        while progress.delivered.load(ordering: .acquiring) < target {
            if progress.ended.load(ordering: .acquiring) { return false }
            spins += 1
            if spins & 0xFFF == 0 {
                if monotonicNanoseconds() > deadline { return false }
                // Long waits (a polling interval, a large backlog) give the core back.
                if spins > 1 << 20 { usleep(50) }
            }
        }
        return true
    }

    /// Ends the follow and waits for its task (the follower closes its descriptors first).
    func stop() {
        cancelAndWait(for: task.withLock { $0 })
        close(descriptor)
    }
}

/// What the follower's task has delivered, read by the measuring thread.
private final class FollowProgress: Sendable {
    let delivered = Atomic<Int>(0)
    let ended = Atomic<Bool>(false)
}

/// Keeps one rig alive from a benchmark's `setup` to its `teardown`, across its iterations.
final class FollowRigHolder {
    var rig: FollowRig?
}
