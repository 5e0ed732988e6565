import PlatformLibc
import FileSystemEventsCore
import SystemPackage

/// `settled` (``WatchOptions/settleQuietPeriod``): never before the last write, once per
/// write session, under the name the consumer knows, never for a file removed first.
///
/// Time is measured without sleeping: a "clock" file written and closed after the event under
/// test settles no sooner than the quiet period after that, so once the clock has settled, a
/// quiet period has passed for everything written before it.
extension ConformanceSuite {
    static let settleQuietPeriod: Duration = .milliseconds(150)

    static var settleScenarios: [ConformanceScenario] {
        [
            ConformanceScenario(72, "settled once, after the last of several writes, and again after a later write") { context in
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                let file = RelativePath("chunks.bin")
                let writing = StallWindow()
                let writer = try OpenFile(context.tree.absolute(file, in: .root))
                for chunk in 0..<8 { try writer.write(String(repeating: "\(chunk)", count: 4096)) }
                writer.close()
                // A test stalled for a quiet period between two chunks wrote two sessions, and
                // a backend that cannot see the file open rightly settles both.
                let sessions = writing.lasted(atLeast: settleQuietPeriod) && !watch.source.capabilities.seesOpenDescriptors ? nil : 1
                try await watch.waitForSettled(file)
                try watch.assertSettledAfterLastWrite(file, sessions: sessions)
                let first = watch.settledCount(file)
                try context.tree.append(file, "more")
                try await watch.waitForSettled(file, count: first + 1)
                try watch.assertSettledAfterLastWrite(file, sessions: sessions.map { $0 + 1 })
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(73, "a file held open for writing is not settled until it is closed") { context in
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                let file = RelativePath("held.log")
                let path = context.tree.path(file)
                let writer = try OpenFile(context.tree.absolute(file, in: .root))
                try writer.write("first part\n")
                try await watch.waitForEvent("the first write of held.log") { $0.path == path && ($0.kind == .created || $0.kind == .modified) }
                // A quiet period passes while the writer keeps the file open.
                try await watch.waitForQuietPeriod()
                if watch.source.capabilities.seesOpenDescriptors {
                    try check(watch.settledCount(file) == 0, "held.log was settled while a writer still had it open")
                }
                try writer.write("second part\n")
                writer.close()
                let closedAt = watch.eventCount
                try await watch.waitForSettled(file, count: watch.settledCount(file) + 1)
                try watch.assertSettledAfterLastWrite(file, sessions: nil)
                try check(watch.events[closedAt...].contains { $0.kind == .settled && $0.path == path },
                          "held.log was not settled after its writer closed it")
                if watch.source.capabilities.seesOpenDescriptors {
                    try check(watch.settledCount(file) == 1, "held.log was settled \(watch.settledCount(file)) times for one write session")
                }
            },
            ConformanceScenario(134, "a file with a second name, in the tree or outside it, held open and written through one name: no name is settled until the writer closes it") { context in
                // A writer works on the inode: each name the consumer knows the file by is told
                // `modified`, and none of them is finished while the writer is at work.
                try context.tree.write("a.dat", "start\n")
                try context.tree.hardLink("b.dat", to: "a.dat")
                try context.tree.write("c.dat", "start\n")
                try context.tree.hardLink("c-elsewhere.dat", to: "c.dat", in: .outside, existingIn: .root)
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                let names: [RelativePath] = ["a.dat", "b.dat", "c.dat"]
                for name in names { try await watch.waitForSettled(name) }
                let before = names.map { watch.settledCount($0) }
                let throughA = try OpenFile(context.tree.absolute("a.dat", in: .root), appending: true)
                let throughOutside = try OpenFile(context.tree.absolute("c-elsewhere.dat", in: .outside), appending: true)
                try throughA.write("first part\n")
                try throughOutside.write("first part\n")
                for name in names {
                    let path = context.tree.path(name)
                    try await watch.waitForEvent("the first write seen at \(name)") { $0.path == path && $0.kind == .modified }
                }
                // A quiet period passes while both writers keep their files open.
                try await watch.waitForQuietPeriod()
                if watch.source.capabilities.seesOpenDescriptors {
                    for (name, count) in zip(names, before) {
                        try check(watch.settledCount(name) == count, "\(name) was settled while a writer still had the file open")
                    }
                }
                try throughA.write("second part\n")
                try throughOutside.write("second part\n")
                throughA.close()
                throughOutside.close()
                let closedAt = watch.eventCount
                for name in names {
                    let path = context.tree.path(name)
                    try await watch.waitForEvent("\(name) settled after its writer closed it", from: closedAt) { $0.path == path && $0.kind == .settled }
                }
                for name in names {
                    try watch.assertSettledAfterLastWrite(name, sessions: nil, presentAtReady: true)
                    try watch.assertSettledWithFinalContent(name)
                }
                try await watch.waitForQuietPeriod()
                if watch.source.capabilities.seesOpenDescriptors {
                    for (name, count) in zip(names, before) {
                        try check(watch.settledCount(name) == count + 1,
                                  "\(name) was settled \(watch.settledCount(name) - count) times for one write session")
                    }
                }
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(138, "a second name made while watched and the file written at once, through the new name or the old, held open: no name is settled until the writer closes it") { context in
                // `ln a b` and a write through `b` (or `a`) read in one batch, before `b` is
                // examined: the writer is at work on the inode from the start, so neither name
                // is finished until it closes, however long it pauses.
                try context.tree.write("new-through.dat", "start\n")
                try context.tree.write("old-through.dat", "start\n")
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                for name: RelativePath in ["new-through.dat", "old-through.dat"] { try await watch.waitForSettled(name) }
                let pairs: [(kept: RelativePath, made: RelativePath, writtenThroughMade: Bool)] = [
                    ("new-through.dat", "new-through-link.dat", true),
                    ("old-through.dat", "old-through-link.dat", false),
                ]
                let names = pairs.flatMap { [$0.kept, $0.made] }
                let before = names.map { watch.settledCount($0) }
                var writers: [OpenFile] = []
                for pair in pairs {
                    try context.tree.hardLink(pair.made, to: pair.kept)
                    let writer = try OpenFile(context.tree.absolute(pair.writtenThroughMade ? pair.made : pair.kept, in: .root), appending: true)
                    try writer.write("first part\n")
                    writers.append(writer)
                }
                for pair in pairs {
                    let made = context.tree.path(pair.made)
                    try await watch.waitForEvent("\(pair.made) reported") { $0.path == made && $0.kind == .created }
                }
                // A quiet period passes while both writers keep their files open.
                try await watch.waitForQuietPeriod()
                if watch.source.capabilities.seesOpenDescriptors {
                    for (name, count) in zip(names, before) {
                        try check(watch.settledCount(name) == count, "\(name) was settled while a writer still had the file open")
                    }
                }
                for writer in writers {
                    try writer.write("second part\n")
                    writer.close()
                }
                let closedAt = watch.eventCount
                for name in names {
                    let path = context.tree.path(name)
                    try await watch.waitForEvent("\(name) settled after its writer closed it", from: closedAt) { $0.path == path && $0.kind == .settled }
                }
                for name in names {
                    try watch.assertSettledAfterLastWrite(name, sessions: nil, presentAtReady: true)
                    try watch.assertSettledWithFinalContent(name)
                }
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(139, "a file written through a second name that is removed while the writer holds it: each later write is told at the name left, which is settled only after the close") { context in
                // `ln kept gone`, a writer opens `gone`, `rm gone`, writes on and closes: the
                // kernel tells those writes and the close at `gone`, a name no longer in the
                // tree, and only they say that `kept` changed and when its writer was done.
                try context.tree.write("kept.dat", "start\n")
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                try await watch.waitForSettled("kept.dat")
                let kept = context.tree.path("kept.dat")
                let gone = context.tree.path("gone.dat")
                try context.tree.hardLink("gone.dat", to: "kept.dat")
                let writer = try OpenFile(context.tree.absolute("gone.dat", in: .root), appending: true)
                try writer.write("first part\n")
                try await watch.waitForEvent("gone.dat reported") { $0.path == gone && $0.kind == .created }
                let before = watch.settledCount("kept.dat")
                try context.tree.remove("gone.dat")
                try await watch.waitForEvent("gone.dat removed") { $0.path == gone && $0.kind == .removed }
                let removedAt = watch.eventCount
                try writer.write("second part\n")
                try await watch.waitForEvent("the write through the removed name, told at kept.dat", from: removedAt) {
                    $0.path == kept && $0.kind == .modified
                }
                // A quiet period passes while the writer keeps the file open.
                try await watch.waitForQuietPeriod()
                if watch.source.capabilities.seesOpenDescriptors {
                    try check(watch.settledCount("kept.dat") == before, "kept.dat was settled while a writer still had the file open")
                }
                try writer.write("third part\n")
                writer.close()
                let closedAt = watch.eventCount
                try await watch.waitForEvent("kept.dat settled after its writer closed it", from: closedAt) {
                    $0.path == kept && $0.kind == .settled
                }
                try watch.assertSettledAfterLastWrite("kept.dat", sessions: nil, presentAtReady: true)
                try watch.assertSettledWithFinalContent("kept.dat")
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(74, "a download renamed into place is settled under its final name, never the temporary one") { context in
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                let downloading = StallWindow()
                let writer = try OpenFile(context.tree.absolute("download.zip.part", in: .root))
                try writer.write(String(repeating: "z", count: 65_536))
                writer.close()
                try context.tree.rename("download.zip.part", to: "download.zip")
                // Stalled for a quiet period before the rename, the temporary name was rightly settled.
                let stalled = downloading.lasted(atLeast: settleQuietPeriod)
                try await watch.waitForSettled("download.zip")
                try await watch.waitForQuietPeriod()
                try check(stalled || watch.settledCount("download.zip.part") == 0, "the temporary name was settled")
                try check(watch.settledCount("download.zip") == 1, "download.zip was settled \(watch.settledCount("download.zip")) times")
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(93, "a file moved in while the watcher is behind is reported before it is settled") { context in
                // A small buffer makes the watcher hand over what it has read while the kernel
                // queue is still busy, so the moved-in name waits to be examined: its `settled`,
                // due at once, must wait for the `created` that reports it.
                let watch = try await context.watch {
                    $0.settleQuietPeriod = .seconds(1)
                    $0.bufferLimit = 8
                }
                try context.tree.write("incoming.pdf", "written elsewhere", in: .outside)
                try await watch.hold(queuing: 200)
                try context.tree.rename("incoming.pdf", to: "incoming.pdf", from: .outside, to: .root)
                for index in 0..<2_000 { try context.tree.write(RelativePath("after-\(index)"), "") }
                watch.resume()
                try await watch.waitForSettled("incoming.pdf")
                try await watch.waitForQuietPeriod()
                try watch.assertSettledAfterLastWrite("incoming.pdf", sessions: 1)
                try watch.assertSettledWithFinalContent("incoming.pdf")
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(75, "a file removed (or renamed away) before settling is never settled under the old name") { context in
                let watch = try await context.watch { $0.settleQuietPeriod = settleQuietPeriod }
                // Stalled for a quiet period before the removal or the rename, the file was
                // rightly settled where it was then.
                let removing = StallWindow()
                try context.tree.write("gone.tmp", "soon removed")
                try context.tree.remove("gone.tmp")
                let removalStalled = removing.lasted(atLeast: settleQuietPeriod)
                try context.tree.makeDirectory("dir")
                let renaming = StallWindow()
                try context.tree.write("dir/inner.txt", "inner")
                try context.tree.rename("dir", to: "moved")
                let renameStalled = renaming.lasted(atLeast: settleQuietPeriod)
                try await watch.waitForSettled("moved/inner.txt")
                try await watch.waitForQuietPeriod()
                try check(removalStalled || watch.settledCount("gone.tmp") == 0, "a removed file was settled")
                try check(renameStalled || watch.settledCount("dir/inner.txt") == 0, "a file was settled under its directory's old name")
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(76, "files present at ready are settled once, at once, unless a writer is still at work") { context in
                try context.tree.makeDirectory("inbox")
                try context.tree.makeDirectory("inbox/sub")
                try context.tree.makeDirectory("empty")
                try context.tree.write("inbox/a.pdf", "complete a")
                try context.tree.write("inbox/b.pdf", "complete b")
                try context.tree.write("inbox/sub/c.txt", "complete c")
                try context.tree.symlink("link", pointingTo: "inbox/a.pdf")
                let writer = try OpenFile(context.tree.absolute("incoming.part", in: .root))
                try writer.write("first half, ")
                // A quiet period long enough that the writer's next write, right after ready,
                // always falls inside it.
                let watch = try await context.watch { $0.settleQuietPeriod = .seconds(1) }
                try writer.write("second half")
                writer.close()
                for file: RelativePath in ["inbox/a.pdf", "inbox/b.pdf", "inbox/sub/c.txt", "incoming.part"] {
                    try await watch.waitForSettled(file)
                }
                try await watch.waitForQuietPeriod()
                for file: RelativePath in ["inbox/a.pdf", "inbox/b.pdf", "inbox/sub/c.txt"] {
                    try check(watch.settledCount(file) == 1, "\(file), present at ready, was settled \(watch.settledCount(file)) times")
                    try watch.assertSettledWithFinalContent(file)
                }
                try check(watch.events.allSatisfy { $0.kind != .settled || $0.itemType == .file },
                          "something other than a regular file was settled: \(watch.events.filter { $0.kind == .settled && $0.itemType != .file })")
                try check(watch.settledCount("link") == 0, "a symlink was settled")
                try watch.assertSettledAfterLastWrite("incoming.part", sessions: nil, presentAtReady: true)
                try watch.assertSettledWithFinalContent("incoming.part")
                if watch.source.capabilities.seesOpenDescriptors {
                    try check(watch.settledCount("incoming.part") == 1,
                              "incoming.part, written across ready, was settled \(watch.settledCount("incoming.part")) times")
                }
                try watch.assertReplayMatchesDisk()
            },
            ConformanceScenario(83, "a file moved in from outside is settled at once, unless a write follows the move") { context in
                let watch = try await context.watch { $0.settleQuietPeriod = .seconds(1) }
                try context.tree.write("complete.pdf", "written elsewhere", in: .outside)
                try context.tree.write("growing.log", "first line\n", in: .outside)
                let writer = try OpenFile(context.tree.absolute("growing.log", in: .outside), appending: true)
                try context.tree.rename("complete.pdf", to: "complete.pdf", from: .outside, to: .root)
                try context.tree.rename("growing.log", to: "growing.log", from: .outside, to: .root)
                // The writer still holds the file it was writing when it was moved in. (Had the
                // backend reported the name before this write, the file was settled at once,
                // and is settled again after it: two sessions, both checked below.)
                try writer.write("second line\n")
                writer.close()
                try await watch.waitForQuietPeriod()
                try await watch.waitForSettled("growing.log")
                try check(watch.settledCount("complete.pdf") == 1, "complete.pdf was settled \(watch.settledCount("complete.pdf")) times")
                try watch.assertSettledWithFinalContent("complete.pdf")
                try watch.assertSettledWithFinalContent("growing.log")
                try watch.assertSettledAfterLastWrite("growing.log", sessions: nil)
                if watch.source.capabilities.seesOpenDescriptors {
                    // At once: with the `created` that reports it, not a quiet period (1 s) later.
                    let path = context.tree.path("complete.pdf")
                    let created = watch.events.first { $0.kind == .created && $0.path == path }
                    let settled = watch.events.first { $0.kind == .settled && $0.path == path }
                    if let created, let settled {
                        let gap = settled.timestamp.nanosecondsSinceEpoch - created.timestamp.nanosecondsSinceEpoch
                        try check(gap < 900_000_000, "complete.pdf was settled \(gap / 1_000_000) ms after being moved in, not at once")
                    }
                }
                try watch.assertReplayMatchesDisk()
            },
        ]
    }
}

extension WatchSession {
    /// Lets a quiet period pass, measured by the watch itself: a "clock" file written now is
    /// settled no sooner than the quiet period after it, so once it is, everything written
    /// before it had the time to settle (and a wrong second `settled` the time to show up).
    func waitForQuietPeriod() async throws {
        let clock = RelativePath(stringLiteral: "clock-\(tree.uniqueNumber())")
        try tree.write(clock, "tick")
        try await waitForSettled(clock)
    }

    /// How many `settled` events name `file`.
    func settledCount(_ file: RelativePath) -> Int {
        let path = tree.path(file)
        return events.count { $0.kind == .settled && $0.path == path }
    }

    /// Waits until `file` has been settled `count` times.
    func waitForSettled(_ file: RelativePath, count: Int = 1) async throws {
        let path = tree.path(file)
        try await waitUntil("\(count) settled event(s) for \(file)", tallying: 0, { settled, event in
            if event.kind == .settled && event.path == path { settled += 1 }
        }, until: { $0 >= count })
    }

    /// Every `settled` for `file` comes after a write it ends, and none follows another with
    /// no write in between (once per session); with `sessions`, exactly that many.
    ///
    /// - Parameter presentAtReady: the file was in the tree at `ready`, so its first `settled`
    ///   needs no write before it.
    func assertSettledAfterLastWrite(_ file: RelativePath, sessions: Int?, presentAtReady: Bool = false) throws {
        let path = tree.path(file)
        var writtenSinceSettled = presentAtReady
        var settled = 0
        for event in events where event.path == path {
            switch event.kind {
            case .created, .modified:
                writtenSinceSettled = true
            case .settled:
                try check(writtenSinceSettled, "\(file) was settled with no write since its last settled event (or before being reported): "
                          + events.filter { $0.path == path || $0.previousPath == path }.map { "\($0.kind)\($0.isSynthetic ? " (synthetic)" : "")" }.joined(separator: ", "))
                writtenSinceSettled = false
                settled += 1
            default:
                continue
            }
        }
        try check(!writtenSinceSettled, "\(file) was written after its last settled event and not settled again")
        if let sessions { try check(settled == sessions, "\(file) was settled \(settled) times for \(sessions) write session(s)") }
    }
}

extension WatchSession {
    /// What the consumer read when it received the last `settled` for `file` is the file's
    /// content now: it was not told to import a file that was still being written.
    func assertSettledWithFinalContent(_ file: RelativePath) throws {
        let path = tree.path(file)
        let recorded = zip(events, observations).filter { $0.0.kind == .settled && $0.0.path == path }
        guard let (event, observed) = recorded.last else { throw ConformanceFailure("\(file) was never settled") }
        let final = DiskTree.contentHash(try tree.read(file))
        try check(observed?.hash == final,
                  "\(file) was settled (\(event)) before its final content: what was read then differs from the file now")
    }

    /// The `settled` events for `file`, with the wall-clock time each was made.
    func settledTimes(_ file: RelativePath) -> [Int64] {
        let path = tree.path(file)
        return events.filter { $0.kind == .settled && $0.path == path }.map(\.timestamp.nanosecondsSinceEpoch)
    }

    /// The last `settled` for `file` came at least the quiet period after its last write (its
    /// modification time, which the kernel takes from a clock that never runs ahead of the
    /// wall clock events are stamped with) and, on a backend that sees writers close, promptly
    /// after it. The delay itself is a benchmark figure; the upper bound here only catches a
    /// backend that waits for something else (the next poll of another file, the end of a
    /// burst elsewhere).
    func assertSettledDelay(_ file: RelativePath, quietPeriod: Duration) throws {
        guard let settledAt = settledTimes(file).last else { throw ConformanceFailure("\(file) was never settled") }
        var info = stat()
        guard withC(tree.absolute(file, in: .root), { lstat($0, &info) }) == 0 else {
            throw ConformanceFailure("stat \(file): \(Errno(rawValue: errno))")
        }
        let lastWrite = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let quiet = Int64(quietPeriod.saturatingNanoseconds)
        let delay = settledAt - lastWrite
        try check(delay >= quiet,
                  "\(file) was settled \(delay / 1_000_000) ms after its last write, before the quiet period of \(quietPeriod) passed")
        if source.capabilities.seesOpenDescriptors {
            try check(delay <= quiet + 10_000_000_000,
                      "\(file) was settled \(delay / 1_000_000) ms after its last write, with a quiet period of \(quietPeriod)")
        }
    }
}

/// How long the test itself took over a few steps that a watcher must see as one: a process
/// stalled (descheduled, its writes held up) for a quiet period between them made two, and a
/// scenario then does not hold the watcher to one. Measured, never slept: it only excuses
/// what a stall really caused.
struct StallWindow {
    private let start = ContinuousClock.now

    /// Whether the window, from its creation until now, lasted at least `duration`.
    func lasted(atLeast duration: Duration) -> Bool {
        ContinuousClock.now - start >= duration
    }
}

/// A file kept open for writing, as a copying program keeps it.
final class OpenFile {
    private var descriptor: CInt

    /// - Parameter appending: open to append (keeping the content), not to replace it.
    init(_ path: [UInt8], appending: Bool = false) throws {
        let mode = appending ? O_APPEND : O_TRUNC
        descriptor = withC(path) { open($0, O_WRONLY | O_CREAT | mode | O_CLOEXEC, 0o644) }
        if descriptor < 0 { throw ConformanceFailure("open for writing: \(Errno(rawValue: errno))") }
    }

    func write(_ text: String) throws {
        try write(bytes: Array(text.utf8))
    }

    func write(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            switch bytes[offset...].withUnsafeBytes({ Syscalls.write(descriptor, $0) }) {
            case .success(let written): offset += written
            case .failure(let errno): throw ConformanceFailure("write: \(errno)")
            }
        }
    }

    func close() {
        if descriptor >= 0 { Syscalls.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
