import Benchmark
import FileSystemEvents
import Foundation
import KernelFloors

/// The polling backend's steady-state cost: one scan and diff of an unchanged tree per
/// interval (time, entries per second), and what a snapshot of the tree costs to hold
/// (`scan:` benchmarks, whose `Malloc / free Δ` is the snapshot's heap bytes), beside the C
/// floor walk on the same tree (`scan floor:`), so the ratio comes from one run.
func registerPollingScanBenchmarks() {
    let trees: [(String, Int, () -> FilePath)] = [
        ("10k entries", 10_000, { BenchmarkTree.entries(10_000) }),
        ("100k entries", 100_000, { BenchmarkTree.entries(100_000) }),
    ] + (BenchmarkTree.includesMillion ? [("1M entries", 1_000_000, { BenchmarkTree.entries(1_000_000) })] : [])
    // The scan and its floor are measured alike, so that their ratio compares like with like.
    let sideBySide = benchmarkConfiguration(
        metrics: [.wallClock, .cpuTotal, BenchmarkMetrics.entriesPerSecond],
        warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 50
    )
    for (label, _, makeTree) in trees {
        var snapshot: FileTreeSnapshot?
        Benchmark("scan+diff: \(label) (polling)", configuration: sideBySide) { benchmark in
            guard var current = snapshot else { return benchmark.error("no snapshot: setup failed") }
            // The only holder of its tree, as in the polling backend: `update()` then diffs in
            // place instead of copying a tree someone else still holds.
            snapshot = nil
            let start = ContinuousClock.now
            benchmark.startMeasurement()
            let events: [FileSystemEvent]
            do {
                events = try current.update()
            } catch {
                snapshot = current  // a failed update leaves the snapshot as it was
                return benchmark.error("\(error)")
            }
            benchmark.stopMeasurement()
            let elapsed = seconds(since: start)
            benchmark.measurement(BenchmarkMetrics.entriesPerSecond, Int(Double(current.entryCount) / elapsed))
            if !events.isEmpty { benchmark.error("the tree changed while it was measured: \(events.count) events") }
            snapshot = current
        } setup: {
            snapshot = try FileTreeSnapshot.scan(makeTree())
        } teardown: {
            snapshot = nil
        }

        var floorRoot = FilePath()
        Benchmark("scan floor: \(label) (C getdents64+fstatat)", configuration: sideBySide) { benchmark in
            let descriptor = open(floorRoot.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { return benchmark.error("cannot open \(floorRoot)") }
            defer { close(descriptor) }
            let start = ContinuousClock.now
            benchmark.startMeasurement()
            let entries = kernel_floor_walk(descriptor)
            benchmark.stopMeasurement()
            benchmark.measurement(BenchmarkMetrics.entriesPerSecond, Int(Double(entries) / seconds(since: start)))
        } setup: {
            floorRoot = makeTree()
        }

        var root = FilePath()
        Benchmark(
            "scan: \(label) (polling)",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock, .memoryLeakedBytes],
                warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 20
            )
        ) { benchmark in
            benchmark.startMeasurement()
            let scanned = try? FileTreeSnapshot.scan(root)
            benchmark.stopMeasurement()
            // Held until after the measurement, so its bytes count as allocated, not freed.
            blackHole(scanned)
        } setup: {
            root = makeTree()
        }
    }

    // Large changes in one large directory, each made between two scans, measured, and undone
    // before the next:
    // - 50,000 names arriving among 50,000 (sorting between them), and leaving again. The diff
    //   inserted and removed entries one at a time, moving every entry after each: 3.5 s for
    //   the arrivals; it should cost about what a scan of the directory does.
    // - Every file renamed along (a batch renumbering, `mv f$i f$((i+1))` from the top down),
    //   or modified (a checkout, a build): each told `renamed` (and `modified`, for the change
    //   time the rename moved) or `modified`. Each event was appended to a copy of the list of
    //   those before it: the polling CLI told 50,000 renames 55 s after they were made and
    //   50,000 modifications 24 s after. They should cost about what the arrivals do.
    let half = 50_000
    func name(_ directory: FilePath, _ index: Int) -> String { directory.appending("f\(String(index).leftPadded(7))").string }
    struct LargeChange {
        let benchmark: String
        let scratch: String
        /// The files there before: `f0000000`, `f0000001`… or, with `evenNames`, every other.
        let evenNames: Bool
        let change: (FilePath) -> Void
        let undo: (FilePath) -> Void
        /// What the change, and then its undoing, are told as: `half` of each.
        let told: FileSystemEvent.Kind
        let untold: FileSystemEvent.Kind
    }
    let largeChanges = [
        LargeChange(
            benchmark: "scan+diff: 50k names arriving among 50k in one directory (polling)", scratch: "crowded", evenNames: true,
            change: { directory in for index in 0..<half { touch(FilePath(name(directory, index * 2 + 1))) } },
            undo: { directory in for index in 0..<half { unlink(name(directory, index * 2 + 1)) } },
            told: .created, untold: .removed),
        LargeChange(
            benchmark: "scan+diff: 50k files renamed along in one directory (polling)", scratch: "renamed", evenNames: false,
            change: { directory in for index in stride(from: half - 1, through: 0, by: -1) { rename(name(directory, index), name(directory, index + 1)) } },
            undo: { directory in for index in 0..<half { rename(name(directory, index + 1), name(directory, index)) } },
            told: .renamed, untold: .renamed),
        LargeChange(
            benchmark: "scan+diff: 50k files modified in one directory (polling)", scratch: "modified", evenNames: false,
            change: { directory in for index in 0..<half { setModificationTime(name(directory, index), seconds: 1) } },
            undo: { directory in for index in 0..<half { setModificationTime(name(directory, index), seconds: 2) } },
            told: .modified, untold: .modified),
    ]
    for workload in largeChanges {
        var directory = FilePath()
        var snapshot: FileTreeSnapshot?
        Benchmark(
            workload.benchmark,
            configuration: benchmarkConfiguration(metrics: [.wallClock, .cpuTotal], warmupIterations: 0, maxDuration: .seconds(30), maxIterations: 5)
        ) { benchmark in
            guard var current = snapshot else { return benchmark.error("no snapshot: setup failed") }
            snapshot = nil
            workload.change(directory)
            benchmark.startMeasurement()
            let changed = (try? current.update())?.filter { $0.kind == workload.told }.count ?? 0
            benchmark.stopMeasurement()
            workload.undo(directory)
            let back = (try? current.update())?.filter { $0.kind == workload.untold }.count ?? 0
            if changed != half || back != half {
                benchmark.error("expected \(half) \(workload.told) and \(half) \(workload.untold) events, got \(changed) and \(back)")
            }
            snapshot = current
        } setup: {
            directory = BenchmarkTree.memoryScratch(workload.scratch)
            for index in 0..<half { touch(FilePath(name(directory, workload.evenNames ? index * 2 : index))) }
            snapshot = try FileTreeSnapshot.scan(directory)
        } teardown: {
            snapshot = nil
            BenchmarkTree.remove(directory)
        }
    }
}

/// Sets a file's access and modification times to `seconds` after the epoch.
private func setModificationTime(_ path: String, seconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
    _ = utimensat(AT_FDCWD, path, &times, 0)
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}
