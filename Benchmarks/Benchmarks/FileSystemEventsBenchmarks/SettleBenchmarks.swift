import Benchmark
import FileSystemEvents
import Foundation

/// Settling (``WatchOptions/settleQuietPeriod``): how soon a finished file is reported, and
/// what settling costs on a burst.
///
/// - **delay**: from the writer's `close(2)` returning to the `settled` event reaching the
///   consumer, with a 50 ms quiet period: the distribution (p50 ... p100 in the output) minus
///   50 ms is what the backend adds to the quiet period. Polling settles a quiet period *and*
///   an interval after the last change it saw (here 10 ms), so its figure also holds the scan.
/// - **burst**: 20,000 files of 4 KiB written (create, write, close) as fast as one thread can,
///   until all 20,000 are settled: the cost of tracking that many write sessions at once. It
///   fails, loudly, if one `settled` is missing.
func registerSettleBenchmarks() {
    let quiet: Duration = .milliseconds(50)
    for backend in BenchmarkBackends.all {
        let holder = WatchRigHolder()
        var iteration = 0
        var root: FilePath?
        Benchmark(
            "settle: delay after close, quiet period 50 ms (\(backend))",
            configuration: benchmarkConfiguration(timeUnits: .milliseconds, maxDuration: .seconds(10), maxIterations: 100)
        ) { benchmark in
            guard let rig = holder.rig else { return benchmark.error("no watch: setup failed") }
            iteration += 1
            let name = "written-\(iteration).bin"
            guard writeAndClose(rig.path(name), [UInt8](repeating: 0x61, count: 4_096)) else {
                return benchmark.error("writing \(name) failed (errno \(errno))")
            }
            benchmark.startMeasurement()
            do {
                try rig.waitFor { $0.kind == .settled && $0.path.lastComponent?.string == name }
            } catch {
                benchmark.error("\(error)")
            }
            benchmark.stopMeasurement()
        } setup: {
            let scratch = BenchmarkTree.scratch("settle-delay-\(backend)")
            root = scratch
            holder.rig = try WatchRig(backend: backend, root: scratch) { $0.settleQuietPeriod = quiet }
        } teardown: {
            holder.stop()
            if let root { BenchmarkTree.remove(root) }
        }

        let chunk = [UInt8](repeating: 0x62, count: 4_096)
        watchBurstBenchmark("settle: 20k-file burst until all settled (\(backend))", backend, scratch: "settle-burst-\(backend)",
                            count: 20_000, maxDuration: .seconds(30), maxIterations: 5,
                            configure: { $0.settleQuietPeriod = quiet },
                            write: { rig, index in _ = writeAndClose(rig.path("f\(index)"), chunk) },
                            counts: { $0.kind == .settled })
    }
}

/// A writer's whole session: open (creating or truncating), one write, close. False if the open
/// or the write failed.
private func writeAndClose(_ path: FilePath, _ bytes: [UInt8]) -> Bool {
    let fd = open(path.string, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
}
