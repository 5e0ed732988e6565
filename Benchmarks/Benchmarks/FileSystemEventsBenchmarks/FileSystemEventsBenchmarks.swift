import Benchmark
import FileSystemEvents
import Foundation

/// Latency, start-up, polling scan, overflow recovery, burst and settling costs of every backend, side
/// by side, so a team can pick a backend per deployment from measured numbers.
///
/// Run all:   `swift package benchmark` (in Benchmarks/)
/// Run one:   `swift package benchmark --filter "latency: create.*inotify"`
/// Regression check against the stored baseline:
///            `swift package benchmark baseline check main`
///
/// Each benchmark runs in a process of its own (package-benchmark's model); the trees it
/// measures are made once and kept between runs (see `BenchmarkTree`).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = benchmarkConfiguration()

    registerLatencyBenchmarks()
    registerHandlerLatencyBenchmarks()
    registerSubscriptionBenchmarks()
    registerSubscriptionRemovalBenchmark()
    registerSubscriptionCreationBenchmark()
    registerStartupBenchmarks()
    registerPollingScanBenchmarks()
    registerOverflowRecoveryBenchmarks()
    registerBurstBenchmarks()
    registerListingBenchmarks()
    registerSnapshotFileBenchmarks()
    registerSettleBenchmarks()
    registerFollowerBenchmarks()
}

/// What counts as a regression in `baseline check`, for the metrics a benchmark measures.
///
/// Two shared cores are noisy: anything tighter than these flags noise rather than code. Heap
/// bytes are deterministic enough for a tighter bound.
enum BenchmarkThresholdPolicy {
    static func thresholds(for metrics: [BenchmarkMetric]) -> [BenchmarkMetric: BenchmarkThresholds] {
        var thresholds: [BenchmarkMetric: BenchmarkThresholds] = [:]
        for metric in metrics {
            switch metric {
            case .wallClock: thresholds[metric] = .init(relative: [.p50: 25, .p90: 35])
            case .memoryLeakedBytes: thresholds[metric] = .init(relative: [.p50: 10])
            case .peakMemoryResident: thresholds[metric] = .init(relative: [.p50: 20])
            case BenchmarkMetrics.entriesPerSecond: thresholds[metric] = .init(relative: [.p50: 25])
            case BenchmarkMetrics.eventsPerSecond: thresholds[metric] = .init(relative: [.p50: 35])
            case BenchmarkMetrics.bytesPerEntry: thresholds[metric] = .init(relative: [.p50: 5])
            default: thresholds[metric] = .init(relative: [.p50: 25])
            }
        }
        return thresholds
    }
}

/// A benchmark configuration whose thresholds cover exactly the metrics it measures.
/// `wallClockThresholds` replaces the policy's wall-clock thresholds where they do not fit.
func benchmarkConfiguration(
    metrics: [BenchmarkMetric] = [.wallClock],
    timeUnits: BenchmarkTimeUnits = .microseconds,
    warmupIterations: Int = 3,
    maxDuration: Duration = .seconds(5),
    maxIterations: Int = 2_000,
    wallClockThresholds: BenchmarkThresholds? = nil
) -> Benchmark.Configuration {
    var thresholds = BenchmarkThresholdPolicy.thresholds(for: metrics)
    if let wallClockThresholds { thresholds[.wallClock] = wallClockThresholds }
    return .init(
        metrics: metrics,
        timeUnits: timeUnits,
        warmupIterations: warmupIterations,
        maxDuration: maxDuration,
        maxIterations: maxIterations,
        thresholds: thresholds
    )
}

/// Metrics of our own, reported next to package-benchmark's.
enum BenchmarkMetrics {
    /// Entries a polling scan+diff covers per second of wall-clock time.
    static var entriesPerSecond: BenchmarkMetric { .custom("Entries per second", polarity: .prefersLarger, useScalingFactor: false) }
    /// Events delivered per second of a burst, from the first write to the last event.
    static var eventsPerSecond: BenchmarkMetric { .custom("Events per second", polarity: .prefersLarger, useScalingFactor: false) }
    /// Mebibytes a follower delivers per second of a file appended as fast as the writer can.
    static var mebibytesPerSecond: BenchmarkMetric { .custom("MiB per second", polarity: .prefersLarger, useScalingFactor: false) }
    /// Bytes a saved snapshot takes on disk per entry.
    static var bytesPerEntry: BenchmarkMetric { .custom("Bytes per entry", polarity: .prefersSmaller, useScalingFactor: false) }
}

/// Creates a file with one `open(2)`. (FileManager.createFile writes a temporary file and
/// renames it into place, which a correct watcher reports as a rename, not a creation.)
func touch(_ path: FilePath) {
    let fd = open(path.string, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
    if fd >= 0 { close(fd) }
}

/// Creates a file with one `open(2)`; false if that failed.
func create(_ path: FilePath) -> Bool {
    let fd = open(path.string, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return false }
    close(fd)
    return true
}

/// Seconds since `start`, for the metrics computed from wall-clock time.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
