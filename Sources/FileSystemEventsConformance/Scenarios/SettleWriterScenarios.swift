import PlatformLibc
import Dispatch
import FileSystemEventsCore
import SystemPackage

/// `settled` against real writers: the pace of a recorder, a logger that reopens for every
/// line, `tar -x`, two writers on one file, a truncate and rewrite, and a large `cp` from
/// another file system. Each asserts what an importer relies on: no `settled` before the final
/// content (what the consumer read when told is what the file holds), exactly one per write
/// session, and not before the quiet period after the last write.
///
/// The writers below keep their own pace (`clock.sleep(until:)`): that pace is the workload
/// under test. Nothing here waits for the watch that way; it waits for events.
extension ConformanceSuite {
    static var settleWriterScenarios: [ConformanceScenario] {
        [
            ConformanceScenario(77, "a writer that keeps the file open and writes 1 MiB every 300 ms for 5 s is settled once, after its last write") { context in
                let quiet: Duration = .seconds(1)
                let watch = try await context.watch { $0.settleQuietPeriod = quiet }
                let file: RelativePath = "recording.mov"
                let writer = try OpenFile(context.tree.absolute(file, in: .root))
                let clock = ContinuousClock()
                let start = clock.now
                var chunk = 0
                var pace = WriterPace(clock: clock)
                while clock.now - start < .seconds(5) {
                    try writer.write(bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: chunk), count: 1 << 20))
                    pace.wrote()
                    chunk += 1
                    try await clock.sleep(until: start + .milliseconds(300) * chunk)
                }
                writer.close()
                try await watch.waitForSettled(file)
                // Where the backend cannot see the file open, a writer stalled for most of a
                // quiet period between two writes wrote two sessions.
                let oneSession = watch.source.capabilities.seesOpenDescriptors || pace.longestGap < quiet / 2
                try watch.assertSettledAfterLastWrite(file, sessions: oneSession ? 1 : nil)
                try watch.assertSettledWithFinalContent(file)
                try watch.assertSettledDelay(file, quietPeriod: quiet)
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(78, "a writer that opens, appends and closes every 200 ms for 5 s is settled once, after the last close") { context in
                let quiet: Duration = .seconds(1)
                let watch = try await context.watch { $0.settleQuietPeriod = quiet }
                let file: RelativePath = "app.log"
                let clock = ContinuousClock()
                let start = clock.now
                var line = 0
                var pace = WriterPace(clock: clock)
                while clock.now - start < .seconds(5) {
                    let writer = try OpenFile(context.tree.absolute(file, in: .root), appending: true)
                    try writer.write("line \(line)\n")
                    writer.close()
                    pace.wrote()
                    line += 1
                    try await clock.sleep(until: start + .milliseconds(200) * line)
                }
                // A writer stalled for most of a quiet period between two closes wrote two sessions.
                try await watch.assertWriterSettled(file, quietPeriod: quiet, oneSession: pace.longestGap < quiet / 2)
            },
            ConformanceScenario(79, "tar -x of 1,000 files settles each file once, after its own content is complete") { context in
                let count = 1_000
                try context.tree.makeDirectory("tar-source", in: .outside)
                var names: [RelativePath] = []
                for index in 0..<count {
                    let directory = "d\(index % 10)"
                    if index < 10 { try context.tree.makeDirectory(RelativePath(stringLiteral: "tar-source/\(directory)"), in: .outside) }
                    let name = "\(directory)/file-\(index).dat"
                    let size = (index &* 7_919) % 40_000
                    try context.tree.write(RelativePath(stringLiteral: "tar-source/\(name)"), String(repeating: "\(index % 10)", count: size), in: .outside)
                    names.append(RelativePath(stringLiteral: "extract/\(name)"))
                }
                let archive = context.tree.path("files.tar", in: .outside).string
                try await ChildProcess.run(["tar", "-cf", archive, "-C", context.tree.path("tar-source", in: .outside).string, "."])
                try context.tree.makeDirectory("extract")
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                try await ChildProcess.run(["tar", "-xf", archive, "-C", context.tree.path("extract").string])
                let wanted = Set(names.map { context.tree.path($0) })
                try await watch.waitUntil("\(count) files settled", tallying: wanted, { awaited, event in
                    if event.kind == .settled { awaited.remove(event.path) }
                }, until: \.isEmpty)
                try await watch.waitForQuietPeriod()
                try watch.assertEachSettledOnceWithFinalContent(names)
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(80, "two writers on one file: settled once, after the last of them closes") { context in
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                let file: RelativePath = "shared.log"
                let first = try OpenFile(context.tree.absolute(file, in: .root), appending: true)
                let second = try OpenFile(context.tree.absolute(file, in: .root), appending: true)
                let writing = StallWindow()
                try first.write("first writer, part 1\n")
                try second.write("second writer, part 1\n")
                try first.write("first writer, part 2\n")
                first.close()
                try second.write("second writer, part 2\n")
                second.close()
                // Blind to the open files, a backend rightly settles twice if the writers stalled
                // for a quiet period between two writes.
                let oneSession = watch.source.capabilities.seesOpenDescriptors || !writing.lasted(atLeast: settleQuietPeriod)
                try await watch.assertWriterSettled(file, quietPeriod: settleQuietPeriod, oneSession: oneSession)
            },
            ConformanceScenario(81, "a file truncated and rewritten is settled again, once, with the new content") { context in
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                let file: RelativePath = "report.csv"
                let original = try OpenFile(context.tree.absolute(file, in: .root))
                try original.write(String(repeating: "old row\n", count: 4_096))
                original.close()
                try await watch.waitForSettled(file)
                let first = watch.settledCount(file)
                let rewriting = StallWindow()
                let rewrite = try OpenFile(context.tree.absolute(file, in: .root))  // O_TRUNC
                try rewrite.write("new header\n")
                try rewrite.write(String(repeating: "new row\n", count: 100))
                rewrite.close()
                let oneMore = watch.source.capabilities.seesOpenDescriptors || !rewriting.lasted(atLeast: settleQuietPeriod)
                try await watch.waitForSettled(file, count: first + 1)
                try await watch.waitForQuietPeriod()
                try watch.assertSettledAfterLastWrite(file, sessions: oneMore && first == 1 ? 2 : nil)
                try watch.assertSettledWithFinalContent(file)
                try watch.assertSettledDelay(file, quietPeriod: settleQuietPeriod)
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(82, "a large cp from another file system is settled once, after the copy is complete") { context in
                let mebibytes = ConformanceSuite.largeCopyMebibytes
                let source = try LargeSourceFile(mebibytes: mebibytes, besides: context.tree)
                defer { source.remove() }
                let quiet: Duration = .seconds(1)
                // The harness reads the whole file on every `modified`, as an importer that
                // checks a file's content on every notification would; such a consumer asks
                // for a latency window, so a copy's thousands of writes cost it a few reads.
                let watch = try await context.watch {
                    $0.settleQuietPeriod = quiet
                    $0.latency = .milliseconds(250)
                }
                let file: RelativePath = "disk-image.iso"
                let copying = StallWindow()
                try await ChildProcess.run(["cp", source.path, context.tree.path(file).string])
                // A copy that took a quiet period or more may have been held up that long by
                // writeback between two writes: two sessions to a backend blind to open files.
                let oneSession = watch.source.capabilities.seesOpenDescriptors || !copying.lasted(atLeast: quiet)
                try await watch.assertWriterSettled(file, quietPeriod: quiet, oneSession: oneSession)
            },
            ConformanceScenario(136, "a cp within the file system, one copy_file_range call the kernel reports only when it returns, is settled once, after the copy is complete") { context in
                // coreutils' cp (9.0 and later) copies within a file system with one
                // `copy_file_range` call: the kernel queues `IN_CREATE` when it opens the copy
                // and `IN_MODIFY` when the call returns, nothing in between. A quiet period
                // counted from the creation settled a 200 MiB copy half written.
                let mebibytes = ConformanceSuite.largeCopyMebibytes
                let source = try LargeSourceFile(mebibytes: mebibytes, besides: context.tree, acrossFileSystems: false)
                defer { source.remove() }
                let quiet: Duration = .milliseconds(100)
                let watch = try await context.watch {
                    $0.settleQuietPeriod = quiet
                    // As in 82: the harness reads the whole file on every `modified`.
                    $0.latency = .milliseconds(250)
                }
                let file: RelativePath = "copied.iso"
                let target = context.tree.absolute(file, in: .root)
                async let stillest = CopyProgress.longestStill(of: target, until: Int64(mebibytes) << 20)
                try await ChildProcess.run(["cp", source.path, context.tree.path(file).string])
                // A copy the machine held up for a quiet period (writeback, another process
                // on the cores) did stand still that long, and may be settled in between.
                try await watch.assertWriterSettled(file, quietPeriod: quiet, oneSession: await stillest < quiet / 2)
            },
        ]
    }

    /// The size of scenario 82's copy: 500 MiB, or `FILEWATCH_CONFORMANCE_COPY_MIB`.
    static var largeCopyMebibytes: Int { StressSettings.positiveInteger("FILEWATCH_CONFORMANCE_COPY_MIB") ?? 500 }
}

extension WatchSession {
    /// What an importer relies on once a writer is done with `file`: waits for its `settled`,
    /// and a quiet period more for a wrongly early second one to show up; then it was settled
    /// after its last write (once, where the writer is known to have written one session),
    /// with its final content, and not before the quiet period.
    func assertWriterSettled(_ file: RelativePath, quietPeriod: Duration, oneSession: Bool) async throws {
        try await waitForSettled(file)
        try await waitForQuietPeriod()
        try assertSettledAfterLastWrite(file, sessions: oneSession ? 1 : nil)
        try assertSettledWithFinalContent(file)
        try assertSettledDelay(file, quietPeriod: quietPeriod)
    }

    /// Each of `files` was settled exactly once, after its last write, and what the consumer
    /// read when told was its final content. One pass over the events, for many files.
    func assertEachSettledOnceWithFinalContent(_ files: [RelativePath]) throws {
        let recorded = Array(zip(events, observations))
        var byPath: [FilePath: [(FileSystemEvent, ContentObservation?)]] = [:]
        for (event, observed) in recorded where event.kind == .created || event.kind == .modified || event.kind == .settled {
            byPath[event.path, default: []].append((event, observed))
        }
        for file in files {
            let history = byPath[tree.path(file)] ?? []
            let settled = history.filter { $0.0.kind == .settled }
            try check(settled.count == 1, "\(file) was settled \(settled.count) times for one write session")
            try check(history.last?.0.kind == .settled, "\(file) was written after it was settled")
            let final = DiskTree.contentHash(try tree.read(file))
            try check(settled[0].1?.hash == final, "\(file) was settled before its content was complete")
        }
    }
}

/// A file of `mebibytes` on another file system than the scratch tree when there is one
/// (`/dev/shm`), so a `cp` from it copies across file systems, as a copy from a USB stick
/// or a network share does.
struct LargeSourceFile {
    let path: String

    /// - Parameter acrossFileSystems: on `/dev/shm` where it is another file system; `false`
    ///   keeps it beside the tree, where `cp` copies with `copy_file_range`.
    init(mebibytes: Int, besides tree: ScratchTree, acrossFileSystems: Bool = true) throws {
        var treeStatus = stat()
        var shmStatus = stat()
        let crossesFileSystems = acrossFileSystems && withC(tree.absolute(.root, in: .outside)) { lstat($0, &treeStatus) } == 0
            && lstat("/dev/shm", &shmStatus) == 0 && shmStatus.st_dev != treeStatus.st_dev && access("/dev/shm", W_OK) == 0
        path = crossesFileSystems
            ? "/dev/shm/filewatch-conformance-copy-\(getpid())-\(tree.uniqueNumber())"
            : tree.path("copy-source", in: .outside).string
        let writer = try OpenFile(Array(path.utf8))
        for index in 0..<mebibytes {
            // Every mebibyte differs, so a copy cut short or reordered has another hash.
            try writer.write(bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 31 &+ 7), count: 1 << 20))
        }
        writer.close()
    }

    func remove() {
        _ = unlink(path)
    }
}

/// The longest time a paced writer went between two of its writes: its pace is the workload,
/// and a writer the machine stalled for a quiet period really did write two sessions.
struct WriterPace {
    let clock: ContinuousClock
    private var last: ContinuousClock.Instant?
    private(set) var longestGap: Duration = .zero

    init(clock: ContinuousClock) { self.clock = clock }

    mutating func wrote() {
        let now = clock.now
        if let last { longestGap = max(longestGap, now - last) }
        last = now
    }
}

/// How a copy made by another process progressed, seen from outside by its size.
enum CopyProgress {
    /// The longest time the file at `path` kept one size, from when it appeared until it
    /// reached `size` (or two minutes passed): how long the copy stood still, which no backend
    /// can tell from a finished copy.
    ///
    /// Sampled every 2 ms on a thread of its own (the pace of the look, not a wait for the
    /// watch): on the tasks' threads, busy with the harness reading the copy, it was not
    /// scheduled until the copy was over, and saw no still time at all.
    static func longestStill(of path: [UInt8], until size: Int64) async -> Duration {
        await withCheckedContinuation { (continuation: CheckedContinuation<Duration, Never>) in
            DispatchQueue.global().async {
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(120)
                var lastSize: Int64 = -1
                var since = clock.now
                var longest: Duration = .zero
                while clock.now < deadline {
                    var info = stat()
                    let found: Int64 = withC(path) { lstat($0, &info) } == 0 ? Int64(info.st_size) : -1
                    let now = clock.now
                    if found != lastSize {
                        lastSize = found
                        since = now
                    } else if found >= 0 {
                        longest = max(longest, now - since)
                    }
                    if found >= size { break }
                    usleep(2_000)
                }
                continuation.resume(returning: longest)
            }
        }
    }
}
