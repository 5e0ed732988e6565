import Benchmark
import FileSystemEvents
import Foundation

/// What one more subscriber costs on a shared `FileSystemWatcher`, against what an independent
/// source costs (`ready: ... (backend)`, the start-up benchmarks): the time from subscribing to
/// its `ready`, and, for 100 subscribers, the inotify instances and kernel watches the process
/// holds, against 100 independent sources on the same tree.
func registerSubscriptionBenchmarks() {
    for backend in BenchmarkBackends.all {
        let holder = KeeperHolder()
        var root = FilePath()
        Benchmark(
            "subscribe: ready of one more subscription, 100k entries (\(backend))",
            configuration: benchmarkConfiguration(
                metrics: [.wallClock, .peakMemoryResident],
                warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 200
            )
        ) { benchmark in
            guard let watcher = holder.watcher else { return benchmark.error("no watcher: setup failed") }
            benchmark.startMeasurement()
            let stream = watcher.subscribe()
            var iterator = stream.makeBlockingIterator()
            do {
                while let update = try iterator.next() { if case .ready = update { break } }
            } catch {
                return benchmark.error("\(error)")
            }
            benchmark.stopMeasurement()
            stream.finish()
            while (try? iterator.next()) != nil {}
        } setup: {
            root = BenchmarkTree.entries(100_000)
            try holder.start(backend: backend, root: root)
        } teardown: {
            holder.stop()
        }
    }

    // Kernel resources for 100 consumers of one tree: shared, or each with its own source.
    // One iteration each; the figures are counts read from /proc/self/fdinfo.
    for backend in BenchmarkBackends.all where backend != .polling {
        for shared in [true, false] {
            var root = FilePath()
            Benchmark(
                "100 \(shared ? "subscriptions" : "independent sources"), 10k entries: kernel watches (\(backend))",
                configuration: benchmarkConfiguration(
                    metrics: [.wallClock, .inotifyInstances, .inotifyWatches, .peakMemoryResident],
                    warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 1
                )
            ) { benchmark in
                var streams: [FileSystemEventStream] = []
                let watcher = FileSystemWatcher(options: BenchmarkBackends.options(root)) { options throws(FileSystemEventsError) in
                    try backend.makeSource(options: options)
                }
                benchmark.startMeasurement()
                do {
                    for _ in 0..<100 {
                        let stream = shared ? watcher.subscribe() : try backend.makeSource(options: BenchmarkBackends.options(root)).updates()
                        var iterator = stream.makeBlockingIterator()
                        while let update = try iterator.next() { if case .ready = update { break } }
                        streams.append(stream)
                    }
                } catch {
                    return benchmark.error("\(error)")
                }
                benchmark.stopMeasurement()
                let (instances, watches) = InotifyUsage.current()
                benchmark.measurement(.inotifyInstances, instances)
                benchmark.measurement(.inotifyWatches, watches)
                for stream in streams {
                    stream.finish()
                    var iterator = stream.makeBlockingIterator()
                    while (try? iterator.next()) != nil {}
                }
            } setup: {
                root = BenchmarkTree.entries(10_000)
            }
        }
    }
}

/// `rm -rf` of one directory of 50,000 files, watched through a subscription: the shared
/// watcher's copy of the tree takes each removal out of a sorted directory of up to 50,000
/// entries, in the order the file system lists them (hash order), so one at a time each moved
/// half the entries after it. Time from the first unlink to the subscriber's last `removed`.
func registerSubscriptionRemovalBenchmark() {
    let count = 50_000
    registerOneDirectoryChange("subscription: 50k files removed from one directory (inotify)", scratch: "subscription-removal",
                               reported: .removed, count: count) { directory in
        for index in 0..<count { touch(directory.appending("f\(index)")) }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.string)) ?? []
        return { for name in names { unlink(directory.appending(name).string) } }
    }
}

/// 50,000 files created among 50,000 in one directory, watched through a subscription, with
/// names in no particular order (hashes, as caches and object stores name files): the shared
/// watcher's copy of the tree puts each one into a sorted directory of 50,000 to 100,000
/// entries. Time from the first create to the subscriber's last `created`.
func registerSubscriptionCreationBenchmark() {
    let count = 50_000
    registerOneDirectoryChange("subscription: 50k files created among 50k in one directory (inotify)", scratch: "subscription-creation",
                               reported: .created, count: count) { directory in
        // A fixed sequence of well-mixed names, the same in every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func nextName() -> String {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return String(state >> 16, radix: 16)
        }
        for _ in 0..<count { touch(directory.appending(nextName())) }
        let names = (0..<count).map { _ in nextName() }
        return { for name in names { touch(directory.appending(name)) } }
    }
}

/// A large change to one directory (`many`) under a subscription of an inotify watcher: `prepare`
/// fills the directory before the watch and returns the change, which is timed from its start to
/// the subscriber's `count`th event of kind `reported`.
private func registerOneDirectoryChange(
    _ name: String, scratch: String, reported: FileSystemEvent.Kind, count: Int,
    prepare: @escaping (FilePath) -> () -> Void
) {
    Benchmark(
        name,
        configuration: benchmarkConfiguration(
            metrics: [.wallClock, .cpuTotal], timeUnits: .milliseconds,
            warmupIterations: 0, maxDuration: .seconds(60), maxIterations: 3
        )
    ) { benchmark in
        let root = BenchmarkTree.memoryScratch(scratch)
        defer { BenchmarkTree.remove(root) }
        let directory = root.appending("many")
        mkdir(directory.string, 0o755)
        let change = prepare(directory)
        let watcher = FileSystemWatcher(options: BenchmarkBackends.options(root)) { options throws(FileSystemEventsError) in
            try FileSystemEventBackend.inotify.makeSource(options: options)
        }
        let stream = watcher.subscribe()
        defer { stream.finish() }
        var iterator = stream.makeBlockingIterator()
        do {
            while let update = try iterator.next() { if case .ready = update { break } }
        } catch {
            return benchmark.error("\(error)")
        }
        benchmark.startMeasurement()
        change()
        var seen = 0
        do {
            while seen < count, let update = try iterator.next() {
                guard case .events(let events) = update else { continue }
                seen += events.lazy.filter { $0.kind == reported }.count
            }
        } catch {
            benchmark.error("\(error)")
        }
        benchmark.stopMeasurement()
        if seen < count { benchmark.error("\(seen) of \(count) \(reported.rawValue) events reported") }
    }
}

/// The long-lived subscription that keeps the shared watch running between iterations.
final class KeeperHolder {
    var watcher: FileSystemWatcher?
    private var keeper: FileSystemEventStream?

    func start(backend: FileSystemEventBackend, root: FilePath) throws {
        let watcher = FileSystemWatcher(options: BenchmarkBackends.options(root)) { options throws(FileSystemEventsError) in
            try backend.makeSource(options: options)
        }
        let keeper = watcher.subscribe()
        var iterator = keeper.makeBlockingIterator()
        while let update = try iterator.next() { if case .ready = update { break } }
        self.watcher = watcher
        self.keeper = keeper
    }

    func stop() {
        guard let keeper else { return }
        keeper.finish()
        var iterator = keeper.makeBlockingIterator()
        while (try? iterator.next()) != nil {}
        self.keeper = nil
        watcher = nil
    }
}

/// This process's inotify instances and the kernel watches on them, from /proc/self/fdinfo.
enum InotifyUsage {
    static func current() -> (instances: Int, watches: Int) {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var instances = 0, watches = 0
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
                  target.contains("inotify") else { continue }
            instances += 1
            let info = (try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)) ?? ""
            watches += info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
        }
        return (instances, watches)
    }
}

extension BenchmarkMetric {
    static var inotifyInstances: BenchmarkMetric { .custom("inotify instances", polarity: .prefersSmaller, useScalingFactor: false) }
    static var inotifyWatches: BenchmarkMetric { .custom("inotify watches", polarity: .prefersSmaller, useScalingFactor: false) }
}
