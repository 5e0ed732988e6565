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
        watchBurstBenchmark("burst: 20k files (\(backend))", backend, scratch: "burst-\(backend)", count: count,
                            maxDuration: .seconds(20), maxIterations: 10,
                            write: { rig, index in touch(rig.path("f\(index)")) },
                            counts: { $0.kind == .created && $0.itemType == .file })
    }
    // One file given 10,000 names as fast as one thread can: the kernel backends keep an
    // index of a file's names in view (hard links), which each new name is checked against.
    let links = 10_000
    for backend in BenchmarkBackends.all {
        watchBurstBenchmark("burst: 10k hard links of one file (\(backend))", backend, scratch: "links-\(backend)", count: links,
                            maxDuration: .seconds(60), maxIterations: 5,
                            write: { rig, index in
                                if index == 0 {
                                    touch(rig.path("f0"))
                                } else {
                                    _ = link(rig.path("f0").string, rig.path("f\(index)").string)
                                }
                            },
                            counts: { $0.kind == .created && $0.itemType == .file })
    }
}

/// One burst benchmark on a fresh watch per iteration: `write(rig, index)` for each of `count`
/// files as fast as one thread can, then waits until `count` events satisfy `counts`. Wall
/// time, events per second and peak RSS; it fails, loudly, if one event is missing.
func watchBurstBenchmark(
    _ name: String,
    _ backend: FileSystemEventBackend,
    scratch: String,
    count: Int,
    maxDuration: Duration,
    maxIterations: Int,
    configure: @escaping (inout WatchOptions) -> Void = { _ in },
    write: @escaping (WatchRig, Int) -> Void,
    counts: @escaping (FileSystemEvent) -> Bool
) {
    Benchmark(
        name,
        configuration: benchmarkConfiguration(
            metrics: [.wallClock, BenchmarkMetrics.eventsPerSecond, .peakMemoryResident],
            timeUnits: .milliseconds, warmupIterations: 1, maxDuration: maxDuration, maxIterations: maxIterations
        )
    ) { benchmark in
        let root = BenchmarkTree.memoryScratch(scratch)
        let rig: WatchRig
        do {
            rig = try WatchRig(backend: backend, root: root, configure: configure)
        } catch {
            return benchmark.error("\(error)")
        }
        let start = ContinuousClock.now
        benchmark.startMeasurement()
        for index in 0..<count {
            write(rig, index)
        }
        do {
            try rig.waitFor(count: count, counts)
        } catch {
            benchmark.error("\(error)")
        }
        benchmark.stopMeasurement()
        benchmark.measurement(BenchmarkMetrics.eventsPerSecond, Int(Double(count) / seconds(since: start)))
        rig.stop()
        BenchmarkTree.remove(root)
    }
}
