import Benchmark
import FileSystemEvents
import Foundation

/// The live directory listing (`DirectoryListing`): time from a file's creation to the update
/// that shows it, in directories of 10, 10,000 and 100,000 entries (incremental means the
/// large case costs about what the small one does), and a 10,000-file burst until the list
/// holds every file; and in a recursive listing, a burst of 10,000 directory renames until the
/// list has every directory at its new name (each rename takes its subtree along: a cost that
/// once grew with the batch, 12 s for 24,000 renames).
func registerListingBenchmarks() {
    for backend in BenchmarkBackends.all {
        for size in [10, 10_000, 100_000] {
            listingLatencyBenchmark(backend, entries: size)
        }
        listingBurstBenchmark(backend)
        listingDirectoryRenameBenchmark(backend)
    }
}

private func listingLatencyBenchmark(_ backend: FileSystemEventBackend, entries: Int) {
    let holder = ListingRigHolder()
    var iteration = 0
    var root: FilePath?
    Benchmark(
        "listing: create -> update, \(entries) entries (\(backend))",
        configuration: benchmarkConfiguration(maxDuration: .seconds(5), maxIterations: backend == .polling ? 100 : 1_000)
    ) { benchmark in
        guard let rig = holder.rig else { return benchmark.error("no listing: setup failed") }
        iteration += 1
        usleep(1_000)  // sparse changes, as in the event latency benchmarks
        let name = "created-\(iteration)"
        guard create(rig.path(name)) else { return benchmark.error("create failed (errno \(errno))") }
        benchmark.startMeasurement()
        do {
            try rig.waitFor { changes in changes.inserted.contains { changes.entries[$0].name == name } }
        } catch {
            benchmark.error("\(error)")
        }
        benchmark.stopMeasurement()
        // Back to the same size for the next sample, outside the measurement.
        unlink(rig.path(name).string)
        do {
            try rig.waitFor { !$0.removed.isEmpty }
        } catch {
            benchmark.error("\(error)")
        }
    } setup: {
        let scratch = BenchmarkTree.scratch("listing-\(backend)-\(entries)")
        root = scratch
        for index in 0..<entries { touch(scratch.appending("existing-\(index)")) }
        holder.rig = try ListingRig(backend: backend, root: scratch)
    } teardown: {
        holder.stop()
        if let root { BenchmarkTree.remove(root) }
    }
}

private func listingBurstBenchmark(_ backend: FileSystemEventBackend) {
    let count = 10_000
    Benchmark(
        "listing: 10k-file burst (\(backend))",
        configuration: listingBurstConfiguration(maxDuration: .seconds(20))
    ) { benchmark in
        let root = BenchmarkTree.memoryScratch("listing-burst-\(backend)")
        measureListingBurst(benchmark, backend: backend, root: root, count: count) { rig in
            for index in 0..<count {
                touch(rig.path("f\(index)"))
            }
        } until: { $0.entries.count == count }
    }
}

private func listingDirectoryRenameBenchmark(_ backend: FileSystemEventBackend) {
    let count = 10_000
    Benchmark(
        "listing: 10k directory renames, recursive (\(backend))",
        configuration: listingBurstConfiguration(maxDuration: .seconds(30))
    ) { benchmark in
        let root = BenchmarkTree.memoryScratch("listing-renames-\(backend)")
        for index in 0..<count {
            mkdir(root.appending("d\(index)").string, 0o755)
            touch(root.appending("d\(index)/f"))
        }
        measureListingBurst(benchmark, backend: backend, root: root, options: .init(isRecursive: true), count: count) { rig in
            for index in 0..<count {
                rename(root.appending("d\(index)").string, root.appending("e\(index)").string)
            }
            touch(rig.path("marker"))
        } until: { changes in
            // The marker comes after every rename: once it is listed, so is every directory
            // at its new name, with its file.
            changes.inserted.contains { changes.entries[$0].name == "marker" }
        }
    }
}

/// Starts a listing of `root`, then measures `burst` until an update satisfies `isComplete`,
/// and the rate of its `count` changes; removes `root` after.
private func measureListingBurst(
    _ benchmark: Benchmark, backend: FileSystemEventBackend, root: FilePath, options: DirectoryListing.Options = .init(),
    count: Int, _ burst: (ListingRig) -> Void, until isComplete: (DirectoryListingChanges) -> Bool
) {
    defer { BenchmarkTree.remove(root) }
    let rig: ListingRig
    do {
        rig = try ListingRig(backend: backend, root: root, options: options)
    } catch {
        return benchmark.error("\(error)")
    }
    defer { rig.stop() }
    let start = ContinuousClock.now
    benchmark.startMeasurement()
    burst(rig)
    do {
        try rig.waitFor(isComplete)
    } catch {
        benchmark.error("\(error)")
    }
    benchmark.stopMeasurement()
    benchmark.measurement(BenchmarkMetrics.eventsPerSecond, Int(Double(count) / seconds(since: start)))
}

/// A burst's figures: the time until the list shows all of it, the rate, and peak memory.
private func listingBurstConfiguration(maxDuration: Duration) -> Benchmark.Configuration {
    benchmarkConfiguration(
        metrics: [.wallClock, BenchmarkMetrics.eventsPerSecond, .peakMemoryResident],
        timeUnits: .milliseconds, warmupIterations: 1, maxDuration: maxDuration, maxIterations: 10
    )
}

/// Keeps one rig alive from a benchmark's `setup` to its `teardown`.
final class ListingRigHolder {
    var rig: ListingRig?

    func stop() {
        rig?.stop()
        rig = nil
    }
}
