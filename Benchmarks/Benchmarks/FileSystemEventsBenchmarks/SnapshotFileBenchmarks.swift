import Benchmark
import FileSystemEvents
import Foundation

/// Saved snapshots (docs/snapshot-format.md): the time to save a scanned tree (encode, write,
/// fsync, rename), to load it back (read, verify, decode), the bytes per entry on disk, and
/// "what changed since" on an unchanged tree (the load beside one rescan, then the diff). Targets for
/// 1,000,000 entries: save ≤ 1 s, load ≤ 1 s, ≤ 40 bytes per entry, and changes no dearer than
/// a polling scan+diff (`scan+diff:` in PollingScanBenchmarks): the load runs beside the scan.
func registerSnapshotFileBenchmarks() {
    let trees: [(String, () -> FilePath)] = [
        ("100k entries", { BenchmarkTree.entries(100_000) })
    ] + (BenchmarkTree.includesMillion ? [("1M entries", { BenchmarkTree.entries(1_000_000) })] : [])
    for (label, makeTree) in trees {
        let file = FilePath(BenchmarkTree.base.appendingPathComponent("snapshot-\(label.replacingOccurrences(of: " ", with: "-")).fwsnap").path)
        var snapshot: FileTreeSnapshot?
        Benchmark(
            "snapshot save: \(label)",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock, BenchmarkMetrics.bytesPerEntry],
                timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 10
            )
        ) { benchmark in
            guard let snapshot else { return benchmark.error("no snapshot: setup failed") }
            benchmark.startMeasurement()
            do {
                try snapshot.save(to: file)
            } catch {
                return benchmark.error("\(error)")
            }
            benchmark.stopMeasurement()
            let size = (try? FileManager.default.attributesOfItem(atPath: file.string)[.size] as? Int) ?? 0
            benchmark.measurement(BenchmarkMetrics.bytesPerEntry, size / max(1, snapshot.entryCount))
        } setup: {
            snapshot = try FileTreeSnapshot.scan(makeTree())
        } teardown: {
            snapshot = nil
        }

        var root = FilePath()
        Benchmark(
            "snapshot load: \(label)",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock], timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 10
            )
        ) { benchmark in
            benchmark.startMeasurement()
            let loaded = try? FileTreeSnapshot.load(from: file, root: root)
            benchmark.stopMeasurement()
            if loaded == nil { benchmark.error("the snapshot did not load") }
            blackHole(loaded)
        } setup: {
            root = makeTree()
            try FileTreeSnapshot.scan(root).save(to: file)
        }

        Benchmark(
            "changes since snapshot: \(label), unchanged",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock, .cpuTotal], timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 10
            )
        ) { benchmark in
            benchmark.startMeasurement()
            do {
                // Decoded side by side with the rescan (FileTreeSnapshot.changes(sinceSnapshotAt:)).
                // Today's snapshot is what the caller keeps (to save it, or to poll on from it),
                // as `scan+diff` keeps its new snapshot: it is freed after the measurement, not
                // charged to it.
                let (events, today) = try FileTreeSnapshot.changes(sinceSnapshotAt: file, root: root)
                benchmark.stopMeasurement()
                blackHole(today)
                if !events.isEmpty { benchmark.error("the tree changed while it was measured: \(events.count) events") }
            } catch {
                benchmark.error("\(error)")
            }
        } setup: {
            root = makeTree()
            try FileTreeSnapshot.scan(root).save(to: file)
        }
    }
}
