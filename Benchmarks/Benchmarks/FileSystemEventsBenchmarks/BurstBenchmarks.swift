import Benchmark
import FileSystemEvents
import Foundation

/// Burst throughput: 20,000 files created as fast as one thread can, and whether all arrived.
///
/// The files go on tmpfs where there is one: on ext4, recreating 20,000 files right after
/// deleting the previous iteration's makes the inode allocator skip recently deleted inodes,
/// and that kernel cost (seen as `recently_deleted` in perf) swamped the watcher's by 10×.
/// The benchmark fails, loudly, if a single `created` is missing.
func registerBurstBenchmarks() {
    let count = 20_000
    for backend in BenchmarkBackends.all {
        Benchmark(
            "burst: 20k files (\(backend))",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock, BenchmarkMetrics.eventsPerSecond, .peakMemoryResident],
                timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10
            )
        ) { benchmark in
            let root = BenchmarkTree.memoryScratch("burst-\(backend)")
            let rig: WatchRig
            do {
                rig = try WatchRig(backend: backend, root: root)
            } catch {
                return benchmark.error("\(error)")
            }
            let start = ContinuousClock.now
            benchmark.startMeasurement()
            for index in 0..<count {
                touch(rig.path("f\(index)"))
            }
            do {
                try rig.waitFor(count: count) { $0.kind == .created && $0.itemType == .file }
            } catch {
                benchmark.error("\(error)")
            }
            benchmark.stopMeasurement()
            benchmark.measurement(BenchmarkMetrics.eventsPerSecond, Int(Double(count) / seconds(since: start)))
            rig.stop()
            BenchmarkTree.remove(root)
        }
    }
}
