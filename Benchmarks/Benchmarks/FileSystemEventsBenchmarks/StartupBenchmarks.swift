import Benchmark
import FileSystemEvents
import Foundation

/// Start-up: from creating the source to `ready`, and the heap the watch holds once ready
/// (`Malloc / free Δ` in the output: bytes malloc'd minus bytes freed during the measured
/// region, which is the watch's own model, buffers and, for inotifytools, the C library's
/// tables; kernel memory for inotify watches, about 1 KiB each, is not in it).
func registerStartupBenchmarks() {
    let trees: [(String, () -> FilePath)] = [
        ("1k entries", { BenchmarkTree.entries(1_000) }),
        ("10k entries", { BenchmarkTree.entries(10_000) }),
        ("100k entries", { BenchmarkTree.entries(100_000) }),
        ("10k dirs x 10 files", { BenchmarkTree.directories(10_000, filesEach: 10) }),
    ] + (BenchmarkTree.includesMillion ? [("1M entries", { BenchmarkTree.entries(1_000_000) })] : [])
    for (label, makeTree) in trees {
        for backend in BenchmarkBackends.all {
            var root = FilePath()
            Benchmark(
                "ready: \(label) (\(backend))",
                configuration: benchmarkConfiguration(
                    metrics: [.wallClock, .peakMemoryResident],
                    warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 30
                )
            ) { benchmark in
                measureStart(benchmark, backend, root)
            } setup: {
                root = makeTree()
            }

            // Heap in a benchmark of its own, one watch per process: a stopped watch's thread
            // frees its model after `stop()` returns, and those frees would be counted against
            // the next iteration's watch.
            Benchmark(
                "heap after ready: \(label) (\(backend))",
                configuration: benchmarkConfiguration(metrics: [.memoryLeakedBytes], warmupIterations: 0, maxIterations: 1)
            ) { benchmark in
                measureStart(benchmark, backend, root)
            } setup: {
                root = makeTree()
            }
        }
    }
}

/// Measures one watch from its creation to `ready`, then stops it outside the measurement.
private func measureStart(_ benchmark: Benchmark, _ backend: FileSystemEventBackend, _ root: FilePath) {
    benchmark.startMeasurement()
    let rig: WatchRig
    do {
        rig = try WatchRig(backend: backend, root: root)
    } catch {
        return benchmark.error("\(error)")
    }
    benchmark.stopMeasurement()
    rig.stop()
}
