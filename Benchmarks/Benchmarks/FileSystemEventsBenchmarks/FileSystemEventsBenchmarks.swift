import Benchmark
import FileSystemEvents
import Foundation

/// Latency, start-up, scan and burst costs of every backend, side by side.
///
/// Run all:   `swift package benchmark` (in Benchmarks/)
/// Run one:   `swift package benchmark --filter "latency: create.*inotify"`
/// Regression check against the stored baseline:
///            `swift package benchmark baseline check main`
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .microseconds,
        warmupIterations: 5,
        maxDuration: .seconds(5),
        maxIterations: 2_000,
        // A regression is a median or p90 more than 25% above the baseline (2 cores,
        // shared machine: anything tighter flags noise).
        thresholds: [.wallClock: .init(relative: [.p50: 25, .p90: 35])]
    )

    let large = ProcessInfo.processInfo.environment["FILEWATCH_BENCHMARK_LARGE"] != nil

    // MARK: Event latency: from the write returning to the event reaching the consumer.

    for backend in BenchmarkBackends.all {
        latencyBenchmark("latency: create", backend) { rig, index in
            let name = "created-\(index).txt"
            touch(rig.path(name))
            return { $0.kind == .created && $0.path.lastComponent?.string == name }
        }
        latencyBenchmark("latency: append", backend) { rig, _ in
            let handle = FileHandle(forWritingAtPath: rig.path("appended.log").string)
            handle?.seekToEndOfFile()
            handle?.write(Data("line\n".utf8))
            try? handle?.close()
            return { $0.kind == .modified && $0.path.lastComponent?.string == "appended.log" }
        }
        latencyBenchmark("latency: rename", backend) { rig, index in
            let from = rig.path(index % 2 == 0 ? "a.txt" : "b.txt").string
            let to = rig.path(index % 2 == 0 ? "b.txt" : "a.txt").string
            rename(from, to)
            let name = URL(fileURLWithPath: to).lastPathComponent
            return { ($0.kind == .renamed || $0.kind == .created) && $0.path.lastComponent?.string == name }
        }
    }

    // MARK: Start-up: from starting the source to `ready`.

    var trees: [(String, () -> FilePath)] = [
        ("1k entries", { BenchmarkTree.entries(1_000) }),
        ("10k entries", { BenchmarkTree.entries(10_000) }),
        ("100k entries", { BenchmarkTree.entries(100_000) }),
        ("10k dirs x 10 files", { BenchmarkTree.directories(10_000, filesEach: 10) }),
    ]
    if large { trees.append(("1M entries", { BenchmarkTree.entries(1_000_000) })) }
    for (label, makeTree) in trees {
        for backend in BenchmarkBackends.all {
            Benchmark(
                "ready: \(label) (\(backend))",
                configuration: .init(maxDuration: .seconds(10), maxIterations: 30)
            ) { benchmark in
                let root = makeTree()
                benchmark.startMeasurement()
                let rig = try WatchRig(backend: backend, root: root)
                benchmark.stopMeasurement()
                rig.stop()
            }
        }
    }

    // MARK: Polling cost: one scan and diff of an unchanged tree.

    var scanned: [(String, Int, () -> FilePath)] = [
        ("10k entries", 10_000, { BenchmarkTree.entries(10_000) }),
        ("100k entries", 100_000, { BenchmarkTree.entries(100_000) }),
    ]
    if large { scanned.append(("1M entries", 1_000_000, { BenchmarkTree.entries(1_000_000) })) }
    for (label, _, makeTree) in scanned {
        Benchmark(
            "scan+diff: \(label) (polling)",
            configuration: .init(metrics: [.wallClock, .cpuTotal, .peakMemoryResident], maxDuration: .seconds(10), maxIterations: 50)
        ) { benchmark in
            var snapshot = try FileTreeSnapshot.scan(makeTree())
            benchmark.startMeasurement()
            let events = try snapshot.update()
            benchmark.stopMeasurement()
            blackHole(events)
            blackHole(snapshot.entryCount)
        }
    }

    // MARK: Burst: 20,000 files created as fast as possible; all must arrive.

    for backend in BenchmarkBackends.all {
        Benchmark(
            "burst: 20k files (\(backend))",
            configuration: .init(metrics: [.wallClock, .peakMemoryResident], maxDuration: .seconds(20), maxIterations: 10)
        ) { benchmark in
            let root = BenchmarkTree.scratch("burst-\(backend)")
            let rig = try WatchRig(backend: backend, root: root)
            benchmark.startMeasurement()
            for index in 0..<20_000 {
                touch(rig.path("f\(index)"))
            }
            // Fails the benchmark, loudly, if a single file is missing.
            try rig.waitFor(count: 20_000) { $0.kind == .created && $0.itemType == .file }
            benchmark.stopMeasurement()
            rig.stop()
        }
    }
}

/// One latency benchmark: each iteration makes one change and waits for its event.
private func latencyBenchmark(
    _ name: String,
    _ backend: FileSystemEventBackend,
    change: @escaping (WatchRig, Int) -> (FileSystemEvent) -> Bool
) {
    Benchmark(
        "\(name) (\(backend))",
        configuration: .init(metrics: [.wallClock], maxDuration: .seconds(5), maxIterations: backend == .polling ? 200 : 2_000)
    ) { benchmark in
        let root = BenchmarkTree.scratch("latency-\(backend)-\(name.split(separator: " ").last ?? "")")
        touch(root.appending("appended.log"))
        touch(root.appending("a.txt"))
        // One watch per benchmark run; each iteration is one change and its event.
        let rig = try WatchRig(backend: backend, root: root)
        for index in benchmark.scaledIterations {
            benchmark.startMeasurement()
            let matches = change(rig, index)
            try rig.waitFor(matches)
            benchmark.stopMeasurement()
        }
        rig.stop()
    }
}

/// Creates a file with one `open(2)`. (FileManager.createFile writes a temporary file and
/// renames it into place, which a correct watcher reports as a rename, not a creation.)
func touch(_ path: FilePath) {
    let fd = open(path.string, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
    if fd >= 0 { close(fd) }
}
