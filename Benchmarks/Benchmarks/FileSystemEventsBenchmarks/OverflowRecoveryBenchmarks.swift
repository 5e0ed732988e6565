import Benchmark
import FileSystemEvents
import Foundation

/// Recovery from a real kernel queue overflow on large trees, for the inotify backends.
///
/// Each iteration stalls the consumer (the rig stops reading, and 300 distinct changes fill
/// its `bufferLimit`, so the backend stops reading), floods the kernel queue past `fs.inotify.max_queued_events`
/// with attribute changes (two files of the tree, so its shape never changes), and creates a marker file whose event the full queue drops. The
/// measured time runs from the consumer resuming to the marker's `created` arriving: reading
/// what was queued, the rescan and diff against the model, and delivering their events. The
/// benchmark fails if no overflow was reported or the marker never arrived, because then it
/// would not have measured a recovery.
func registerOverflowRecoveryBenchmarks() {
    let trees: [(String, () -> FilePath)] = [
        ("10k entries", { BenchmarkTree.entries(10_000) }),
        ("100k entries", { BenchmarkTree.entries(100_000) }),
    ] + (BenchmarkTree.includesMillion ? [("1M entries", { BenchmarkTree.entries(1_000_000) })] : [])
    for (label, makeTree) in trees {
        for backend in BenchmarkBackends.all where backend != .polling {
            let holder = WatchRigHolder()
            var iteration = 0
            Benchmark(
                "overflow rescan: \(label) (\(backend))",
                configuration: benchmarkConfiguration(warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 20)
            ) { benchmark in
                guard let rig = holder.rig else { return benchmark.error("no watch: setup failed") }
                iteration += 1
                // First distinct changes, which no coalescing can merge, so the consumer's buffer
                // fills and the backend stops reading; then the flood piles up in the kernel.
                for a in 0..<3 {
                    for b in 0..<10 {
                        for c in 0..<10 { utimensat(AT_FDCWD, rig.path("d\(a)/d\(b)/f\(c).txt").string, nil, 0) }
                    }
                }
                let floodA = rig.path("d0/f0.txt").string
                let floodB = rig.path("d0/f1.txt").string
                // Alternating files, so the kernel cannot merge consecutive identical events.
                // Four queues' worth: libinotifytools' owner thread keeps reading into a
                // per-source queue of the same size, so that backend holds three before it
                // overflows (the kernel's, the owner's, and the batch its source took).
                for index in 0..<(4 * kernelQueueLimit()) {
                    utimensat(AT_FDCWD, index % 2 == 0 ? floodA : floodB, nil, 0)
                }
                let marker = rig.path(".overflow-marker-\(iteration)")
                touch(marker)
                var overflowed = false

                benchmark.startMeasurement()
                do {
                    try rig.waitFor { event in
                        if event.kind == .overflow { overflowed = true }
                        return event.kind == .created && event.path == marker
                    }
                } catch {
                    benchmark.error("\(error)")
                }
                benchmark.stopMeasurement()
                if !overflowed { benchmark.error("the flood did not overflow the queue; nothing was measured") }
                unlink(marker.string)
            } setup: {
                holder.rig = try WatchRig(backend: backend, root: makeTree()) { $0.bufferLimit = 64 }
            } teardown: {
                holder.stop()
            }
        }
    }
}

/// `fs.inotify.max_queued_events`, or the kernel default where it cannot be read.
private func kernelQueueLimit() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8),
          let limit = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    else { return 16_384 }
    return limit
}
