import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// `SettleTracker.observe`: the `settled` a batch causes stands right after its cause, so a
/// consumer reading in order never sees a file settled for a write session that is still open.
@Suite struct SettleTrackerTests {
    static let second: UInt64 = 1_000_000_000

    @Test("a file renamed into place and written again in the same batch: renamed, settled, modified; settled again only after the quiet period",
          arguments: [true, false])
    func renamedThenWrittenInOneBatch(usesOpenAndClose: Bool) {
        var tracker = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: usesOpenAndClose)
        let identity = FileIdentity(device: 1, inode: 42)
        let renamed = FileSystemEvent(kind: .renamed, path: "/tree/report.pdf", previousPath: "/tree/report.pdf.part",
                                      itemType: .file, isSynthetic: false, identity: identity)
        let modified = FileSystemEvent(kind: .modified, path: "/tree/report.pdf", itemType: .file, isSynthetic: false, identity: identity)
        let observed = tracker.observe([renamed, modified], now: Self.second)
        #expect(observed.map(\.kind) == [.renamed, .settled, .modified], "\(observed.map(\.kind))")
        #expect(observed.dropFirst().first?.path == "/tree/report.pdf")
        // The write after the rename is a session of its own, settled a quiet period later.
        #expect(tracker.due(now: Self.second + Self.second / 2).isEmpty)
        #expect(tracker.due(now: 3 * Self.second).map(\.path) == ["/tree/report.pdf"])
    }

    /// `echo > a.tmp; mv a.tmp a` read in one go: the backend never reported `a.tmp`, so the
    /// file is `created` at `a`, and what the tracker knows of its writer must follow it there.
    @Test("a file renamed before it was reported: settled with its created when its writer had closed, after the close when not")
    func renamedBeforeReported() {
        let created = FileSystemEvent(kind: .created, path: "/tree/a", itemType: .file, isSynthetic: false, identity: FileIdentity(device: 1, inode: 7))

        var closed = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        closed.wrote(Array("/tree/a.tmp".utf8), now: Self.second)
        closed.closedAfterWriting(Array("/tree/a.tmp".utf8), now: Self.second)
        closed.renamedBeforeReported(from: Array("/tree/a.tmp".utf8), to: Array("/tree/a".utf8), now: Self.second)
        #expect(closed.observe([created], now: Self.second).map(\.kind) == [.created, .settled])
        #expect(closed.due(now: 10 * Self.second).isEmpty, "settled twice")

        var open = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        open.wrote(Array("/tree/a.tmp".utf8), now: Self.second)
        open.renamedBeforeReported(from: Array("/tree/a.tmp".utf8), to: Array("/tree/a".utf8), now: Self.second)
        #expect(open.observe([created], now: Self.second).map(\.kind) == [.created])
        #expect(open.due(now: 10 * Self.second).isEmpty, "settled while its writer is at work")
        open.closedAfterWriting(Array("/tree/a".utf8), now: 11 * Self.second)
        #expect(open.due(now: 11 * Self.second + Self.second / 2).isEmpty)
        #expect(open.due(now: 13 * Self.second).map(\.path) == ["/tree/a"])

        // A writer at work on a file the consumer had heard of, moved to a name it never hears
        // of (left out by the filter): nothing is ever settled there.
        var unreported = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        let earlier = FileSystemEvent(kind: .created, path: "/tree/x", itemType: .file, isSynthetic: false)
        _ = unreported.observe([earlier], now: 0)
        unreported.wrote(Array("/tree/x".utf8), now: Self.second)
        unreported.renamedBeforeReported(from: Array("/tree/x".utf8), to: Array("/tree/.x.swp".utf8), now: Self.second)
        unreported.closedAfterWriting(Array("/tree/.x.swp".utf8), now: 2 * Self.second)
        #expect(unreported.due(now: 10 * Self.second).isEmpty, "settled under a name never reported")

        // Nothing known of a writer: a new file like any other, settled a quiet period later.
        var unknown = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        unknown.renamedBeforeReported(from: Array("/tree/a.tmp".utf8), to: Array("/tree/a".utf8), now: Self.second)
        #expect(unknown.observe([created], now: Self.second).map(\.kind) == [.created])
        #expect(unknown.due(now: 3 * Self.second).map(\.path) == ["/tree/a"])
    }

    /// The sessions are kept by deadline and counted below each directory: a write after the
    /// first deadline was set moves it (nothing settles at the stale one), a directory renamed
    /// or removed takes exactly the sessions below it along (not those of a sibling whose name
    /// starts the same), and a file removed ends its own session only.
    @Test("deadlines move with each write, and a directory renamed or removed takes exactly the sessions below it")
    func deadlinesAndDirectories() {
        func created(_ path: String) -> FileSystemEvent {
            FileSystemEvent(kind: .created, path: FilePath(path), itemType: .file, isSynthetic: false)
        }
        var tracker = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: false)
        _ = tracker.observe(["/r/d/a", "/r/d/b", "/r/dx/c", "/r/e/f", "/r/gone"].map(created), now: 0)
        // Written again half a second later: due a second after that, not after the first.
        _ = tracker.observe([FileSystemEvent(kind: .modified, path: "/r/e/f", itemType: .file, isSynthetic: false)], now: Self.second / 2)
        #expect(tracker.nextDeadlineNanoseconds == Self.second)
        _ = tracker.observe([
            FileSystemEvent(kind: .renamed, path: "/r/g", previousPath: "/r/d", itemType: .directory, isSynthetic: false),
            FileSystemEvent(kind: .removed, path: "/r/gone", itemType: .file, isSynthetic: false),
        ], now: Self.second / 2)
        #expect(tracker.due(now: Self.second).map(\.path) == ["/r/dx/c", "/r/g/a", "/r/g/b"])
        #expect(tracker.nextDeadlineNanoseconds == Self.second + Self.second / 2)
        #expect(tracker.due(now: Self.second + Self.second / 2 - 1).isEmpty)
        #expect(tracker.due(now: Self.second + Self.second / 2).map(\.path) == ["/r/e/f"])
        #expect(tracker.isIdle)

        // Removed with a directory above them: nothing settles, a sibling still does.
        _ = tracker.observe(["/r/d/a", "/r/d/b", "/r/dx/c"].map(created), now: 2 * Self.second)
        _ = tracker.observe([FileSystemEvent(kind: .removed, path: "/r/d", itemType: .directory, isSynthetic: false)], now: 2 * Self.second)
        #expect(tracker.due(now: 4 * Self.second).map(\.path) == ["/r/dx/c"])
        #expect(tracker.isIdle && tracker.nextDeadlineNanoseconds == nil)

        // Two directories exchanged (told so by a polling scan after a rotation of names):
        // the sessions below each go with it.
        _ = tracker.observe(["/r/d1/f", "/r/d2/g", "/r/d3/h"].map(created), now: 5 * Self.second)
        _ = tracker.observe([FileSystemEvent(kind: .exchanged, path: "/r/d1", previousPath: "/r/d2", itemType: .directory,
                                             isSynthetic: false)], now: 5 * Self.second)
        #expect(tracker.due(now: 7 * Self.second).map(\.path) == ["/r/d1/g", "/r/d2/f", "/r/d3/h"])
    }

    @Test("events without a settled cause pass through unchanged and in order")
    func passThrough() {
        var tracker = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        let events = [
            FileSystemEvent(kind: .created, path: "/tree/a", itemType: .file, isSynthetic: false),
            FileSystemEvent(kind: .created, path: "/tree/d", itemType: .directory, isSynthetic: false),
            FileSystemEvent(kind: .removed, path: "/tree/a", itemType: .file, isSynthetic: false),
        ]
        #expect(tracker.observe(events, now: 0) == events)
    }

    @Test("the public API: files present at ready settle at once when older than the quiet period, otherwise by the deadline it gives")
    func presentAtReadyFromSnapshot() throws {
        let tree = try ScratchTree()
        try tree.write("b.txt", "b")
        try tree.write("a.txt", "a")
        try tree.makeDirectory("sub")
        try tree.write("sub/c.txt", "c")
        let snapshot = try FileTreeSnapshot.scan(tree.root)
        let clock = MonotonicClock()

        var immediate = SettleTracker(quietPeriod: .zero, usesOpenAndClose: false)
        let settled = immediate.presentAtReady(snapshot, at: clock.now)
        #expect(settled.map { $0.path.lastComponent?.string } == ["a.txt", "b.txt", "c.txt"], "path order: \(settled)")
        #expect(settled.allSatisfy { $0.kind == .settled && $0.isSynthetic })
        #expect(immediate.isIdle && immediate.nextDeadline == nil)

        // Just written: a writer may still be at work, so they settle a quiet period later.
        var patient = SettleTracker(quietPeriod: .seconds(3600), usesOpenAndClose: false)
        let now = clock.now
        #expect(patient.presentAtReady(snapshot, at: now).isEmpty)
        let deadline = try #require(patient.nextDeadline)
        #expect(deadline > now && deadline <= now.advanced(by: .seconds(3600)))
        #expect(patient.due(at: now.advanced(by: .seconds(60))).isEmpty)
        // Each settles a quiet period after its own change: all of them by an hour from now.
        let first = patient.due(at: deadline)
        #expect(!first.isEmpty, "the earliest deadline settles at least one file")
        let rest = patient.due(at: now.advanced(by: .seconds(3600)))
        #expect(first.count + rest.count == 3 && patient.isIdle, "\(first) \(rest)")
        #expect(patient.isIdle)
    }

    /// `cp` within a file system copies in one `copy_file_range` call: the kernel queues the
    /// creation when the call opens the file and `IN_MODIFY` only when it returns, so for the
    /// whole copy the tracker hears of nothing but `created`.
    @Test("a file created with no write or close seen settles only when two looks a quiet period apart find it unchanged")
    func createdWithNoWriterSeenIsLookedAt() {
        let created = FileSystemEvent(kind: .created, path: "/tree/copy.iso", itemType: .file, isSynthetic: false,
                                      identity: FileIdentity(device: 1, inode: 9))
        func status(size: Int64) -> FileStatus {
            FileStatus(device: 1, inode: 9, mode: 0o100644, size: size, modificationTime: size, changeTime: size)
        }
        var sizes: [Int64] = [100, 200, 300, 300]
        var looks: [[UInt8]] = []
        var tracker = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        #expect(tracker.observe([created], now: 0).map(\.kind) == [.created])
        func due(_ seconds: UInt64) -> [FileSystemEvent] {
            tracker.due(now: seconds * Self.second) { path in
                looks.append(path)
                return status(size: sizes.removeFirst())
            }
        }
        #expect(due(1).isEmpty, "settled at the first look, with nothing to compare it with")
        #expect(due(2).isEmpty, "settled while the copy grew the file")
        #expect(due(3).isEmpty, "settled while the copy grew the file")
        #expect(due(4).map(\.path) == ["/tree/copy.iso"])
        #expect(looks.count == 4 && looks.allSatisfy { $0 == Array("/tree/copy.iso".utf8) })
        #expect(tracker.isIdle)

        // Without a way to look (polling feeds no writes or closes), the quiet period decides.
        var blind = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: false)
        _ = blind.observe([created], now: 0)
        #expect(blind.due(now: Self.second).map(\.path) == ["/tree/copy.iso"])
    }

    @Test("a created file whose writer wrote and closed settles a quiet period after the close, with no look")
    func createdAndClosedIsNotLookedAt() {
        let created = FileSystemEvent(kind: .created, path: "/tree/a", itemType: .file, isSynthetic: false)
        var looked = 0
        let look: ([UInt8]) -> FileStatus? = { _ in
            looked += 1
            return nil
        }
        // The write and the close read with the creation (fed before it is translated).
        var together = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        together.wrote(Array("/tree/a".utf8), now: 0)
        together.closedAfterWriting(Array("/tree/a".utf8), now: 0)
        _ = together.observe([created], now: 0)
        #expect(together.due(now: Self.second, looking: look).map(\.path) == ["/tree/a"])
        // The creation reported first, the write and the close read later: the close ends the wait.
        var later = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        _ = later.observe([created], now: 0)
        later.wrote(Array("/tree/a".utf8), now: Self.second / 2)
        later.closedAfterWriting(Array("/tree/a".utf8), now: Self.second / 2)
        #expect(later.due(now: Self.second, looking: look).isEmpty)
        #expect(later.due(now: 2 * Self.second, looking: look).map(\.path) == ["/tree/a"])
        #expect(looked == 0)
    }

    @Test("a created file renamed while no writer was seen is not settled at the rename: its creator may still be copying")
    func createdThenRenamedWaits() {
        var tracker = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        _ = tracker.observe([FileSystemEvent(kind: .created, path: "/tree/a.part", itemType: .file, isSynthetic: false)], now: 0)
        let renamed = FileSystemEvent(kind: .renamed, path: "/tree/a", previousPath: "/tree/a.part", itemType: .file, isSynthetic: false)
        #expect(tracker.observe([renamed], now: Self.second / 2).map(\.kind) == [.renamed])
        let stable = FileStatus(device: 1, inode: 3, mode: 0o100644, size: 10)
        #expect(tracker.due(now: 2 * Self.second) { _ in stable }.isEmpty)
        #expect(tracker.due(now: 3 * Self.second) { _ in stable }.map(\.path) == ["/tree/a"])
    }

    @Test("names found to be one file share its writer: one at work through either keeps both from settling until it closes")
    func namesOfOneFileShareTheirWriter() {
        let a = Array("/tree/a".utf8), b = Array("/tree/b".utf8)
        let modifiedA = FileSystemEvent(kind: .modified, path: "/tree/a", itemType: .file, isSynthetic: true)
        let createdB = FileSystemEvent(kind: .created, path: "/tree/b", itemType: .file, isSynthetic: false)
        // `ln a b` and a write through `b` read before `b` was examined: the write is noted at
        // `b` alone; the examination finds `b` a name of `a`, and `a` is told modified.
        var throughNew = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        throughNew.wrote(b, now: 0)
        throughNew.shareWriter(among: [b, a])
        _ = throughNew.observe([createdB, modifiedA], now: 0)
        #expect(throughNew.due(now: 5 * Self.second).isEmpty, "a name settled while the writer had the file open")
        throughNew.closedAfterWriting(a, now: 5 * Self.second)
        throughNew.closedAfterWriting(b, now: 5 * Self.second)
        #expect(throughNew.due(now: 6 * Self.second).map(\.path) == ["/tree/a", "/tree/b"])
        #expect(throughNew.isIdle)

        // A write through `a` in that batch: `b`, reported created, is not a creation of its own
        // to look at twice, but a name of a file being written.
        var throughOld = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        throughOld.wrote(a, now: 0)
        throughOld.shareWriter(among: [b, a])
        _ = throughOld.observe([createdB, FileSystemEvent(kind: .modified, path: "/tree/a", itemType: .file, isSynthetic: false)], now: 0)
        var looked = 0
        #expect(throughOld.due(now: 5 * Self.second) { _ in looked += 1; return nil }.isEmpty)
        #expect(looked == 0)
        throughOld.closedAfterWriting(a, now: 5 * Self.second)
        throughOld.closedAfterWriting(b, now: 5 * Self.second)
        #expect(throughOld.due(now: 6 * Self.second).map(\.path) == ["/tree/a", "/tree/b"])

        // A writer that closed before the names were matched: each settles a quiet period after the close.
        var closed = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        closed.wrote(b, now: 0)
        closed.closedAfterWriting(b, now: Self.second)
        closed.shareWriter(among: [b, a])
        _ = closed.observe([createdB, modifiedA], now: Self.second)
        #expect(closed.due(now: 2 * Self.second - 1).isEmpty)
        #expect(closed.due(now: 2 * Self.second).map(\.path) == ["/tree/a", "/tree/b"])

        // No writer seen at any name: nothing to share, nothing stored.
        var none = SettleTracker(quietPeriod: .seconds(1), usesOpenAndClose: true)
        none.shareWriter(among: [b, a])
        #expect(none.isIdle)
    }
}
