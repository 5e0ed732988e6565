#if os(Linux)
import PlatformLibc
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage
import Testing

/// After `IN_Q_OVERFLOW` the model is rebuilt from disk. Rebuilt at the moment the overflow
/// is read, it showed a disk that already held the effect of changes whose events were still
/// queued behind the overflow: those were then applied a second time (a directory renamed away
/// and back was reported renamed away and back after a marker written later), and a consumer
/// that waits for a marker file saw the marker before them. The rebuild waits for the queue to
/// drain, so nothing queued before the marker comes after it.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct OverflowOrderTests {
    @Test("changes queued behind an overflow are not reported after a marker written after them")
    func changesQueuedBehindOverflow() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("d/inner")
        try tree.write("d/inner/f", "f")
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try OverflowInjectingKernel()
        }
        var reader = try await MarkerCollector(stream)

        try tree.write(RelativePath(bytes: OverflowInjectingKernel.triggerName))
        try tree.rename("d", to: "e")
        try tree.write("e/inner/g", "g")
        try tree.rename("e", to: "d")
        try tree.write("marker", "written after every change above")
        try tree.write(RelativePath(bytes: OverflowInjectingKernel.releaseName))
        try await reader.collect(until: "marker")
        var events = reader.events
        let marker = (events.firstIndex { $0.path.lastComponent?.string == "marker" } ?? events.count - 1) + 1
        #expect(events.contains { $0.kind == .overflow }, "the injected overflow was not reported")

        try tree.write("marker-2", "the end of the test")
        try await reader.collect(until: "marker-2")
        events = reader.events
        let harness: Set<String> = ["marker", "marker-2", "overflow-release"]
        // The rebuild's own report is one diff of one moment (its items come in path order,
        // the marker among them); what must not follow the marker is an event read from the
        // queue, which happened before it.
        let late = events[marker...].filter { !$0.isSynthetic && !harness.contains($0.path.lastComponent?.string ?? "") }
        #expect(late.isEmpty, "read from the queue but reported after the marker written after it: \(late.map { "\($0.kind) \($0.path)" })")
        // And the changes are there before it: g was written while its directory was away.
        #expect(events[..<marker].contains { $0.path.lastComponent?.string == "g" && $0.kind == .created })
    }

    /// The rebuild compares models that keep no times, so its new files came in path order, a
    /// marker among them: `.marker` or `a-marker`, made after files lost to an overflow, was
    /// told before them, and a consumer that stops at its marker missed them (a race hunt,
    /// 2026-12-04: 6 of 10 runs of `filewatch watch` with a marker named to sort first). The
    /// new files are told oldest first, after the writes lost with them, as polling tells them.
    @Test("a marker file made after changes lost to an overflow is told after them, whatever its name")
    func markerAfterChangesLostToOverflow() async throws {
        let tree = try ScratchTree()
        try tree.write("zz-existing", "old")
        try tree.makeDirectories("zz-deep")
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try OverflowInjectingKernel(dropsChangesBehind: true)
        }
        var reader = try await MarkerCollector(stream)

        try tree.write(RelativePath(bytes: OverflowInjectingKernel.triggerName))
        var made: [RelativePath] = []
        for index in 0..<20 {
            let name = RelativePath(stringLiteral: "b\(index)")
            try tree.write(name, "lost to the overflow")
            made.append(name)
        }
        try tree.write("zz-deep/below", "lost to the overflow")
        made.append("zz-deep/below")
        try tree.append("zz-existing", " and written while lost")
        // The marker is made on a later tick of the file system's clock than everything
        // above (within one tick, creation order is not on disk to be found).
        try waitForNextTimestampTick(after: made.map { tree.absolute($0, in: .root) } + [tree.absolute("zz-existing", in: .root)])
        try tree.write("a-marker", "made after every change above")
        try tree.write(RelativePath(bytes: OverflowInjectingKernel.releaseName))
        try await reader.collect(until: "a-marker")
        let events = reader.events
        #expect(events.contains { $0.kind == .overflow }, "the injected overflow was not reported")
        let markerAt = try #require(events.firstIndex { $0.path.lastComponent?.string == "a-marker" })
        let before = events[..<markerAt]
        let root = tree.absolute(.root, in: .root)
        for name in made {
            let path = FilePath(bytes: root.appendingComponent(name.bytes))
            #expect(before.contains { $0.kind == .created && $0.path == path },
                    "\(name), made before the marker, was not told before it: \(events.map { "\($0.kind) \($0.path)" })")
        }
        #expect(before.contains { $0.kind == .modified && $0.path.lastComponent?.string == "zz-existing" },
                "the write to zz-existing, made before the marker, was not told before it: \(events.map { "\($0.kind) \($0.path)" })")
        await reader.stop()
    }

    /// The rebuild after an overflow compares models that keep no times, so it tells what
    /// changed in place from the change times it reads: it read them for regular files only,
    /// and a symlink's `touch -h -d` (or a FIFO's, or a directory's) lost to the overflow was
    /// never told: a live listing kept a directory's old time for good.
    @Test("new times of a file, a symlink, a FIFO and a directory lost to an overflow are told by the rebuild")
    func timesLostToOverflow() async throws {
        let tree = try ScratchTree()
        try tree.write("f", "f")
        try tree.symlink("s", pointingTo: "nowhere")
        try tree.makeFIFO("p")
        try tree.makeDirectory("d")
        try tree.makeDirectory("m")
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try OverflowInjectingKernel()
        }
        var reader = try await MarkerCollector(stream)

        try tree.write(RelativePath(bytes: OverflowInjectingKernel.triggerName))
        for name in ["f", "s", "p", "d"] {
            try tree.setTimes(RelativePath(name), seconds: 631_152_000)  // 1990: older than any "changed since"
        }
        try tree.changeMode("m", to: 0o700)
        try tree.write("marker", "written after every change above")
        try tree.write(RelativePath(bytes: OverflowInjectingKernel.releaseName))
        try await reader.collect(until: "marker")
        let events = reader.events
        #expect(events.contains { $0.kind == .overflow }, "the injected overflow was not reported")
        for name in ["f", "s", "p", "d", "m"] {
            #expect(events.contains { $0.path.lastComponent?.string == name && $0.kind == .attributesChanged },
                    "new times of \(name), lost to the overflow, were not told: \(events.map { "\($0.kind) \($0.path)" })")
        }
        await reader.stop()
    }

    /// With directories' own changes reported (what a live listing asks for, since its rows
    /// show their times), a directory whose entries changed while events were lost is told
    /// `modified` by the rebuild, as it would have been told had the events been read.
    @Test("a directory whose entries changed during an overflow is told modified when directory changes are reported")
    func directoryContentLostToOverflow() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("c")
        try tree.makeDirectory("quiet")
        // Older than any "changed since" of the rebuild, which looks back a little before the
        // events it lost.
        try waitForNextTimestampTick(after: [tree.absolute("quiet", in: .root)], plus: 100_000_000)  // 5× the margin
        var options = WatchOptions(roots: [tree.root])
        options.reportsDirectoryContentChanges = true
        let stream = InotifyEventSource.updates(options: options) { () throws(FileSystemEventsError) in
            try OverflowInjectingKernel()
        }
        var reader = try await MarkerCollector(stream)

        try tree.write(RelativePath(bytes: OverflowInjectingKernel.triggerName))
        try tree.write("c/new", "made while events were lost")
        try tree.write("marker", "written after every change above")
        try tree.write(RelativePath(bytes: OverflowInjectingKernel.releaseName))
        try await reader.collect(until: "marker")
        let events = reader.events
        #expect(events.contains { $0.kind == .overflow }, "the injected overflow was not reported")
        let overflow = events.firstIndex { $0.kind == .overflow } ?? events.endIndex
        #expect(events[overflow...].contains { $0.path.lastComponent?.string == "c" && $0.kind == .modified },
                "the change to c, lost to the overflow, was not told: \(events.map { "\($0.kind) \($0.path)" })")
        #expect(!events[overflow...].contains { $0.path.lastComponent?.string == "quiet" },
                "quiet did not change, yet was told: \(events.map { "\($0.kind) \($0.path)" })")
        await reader.stop()
    }
}

/// Waits (spinning on the file system's coarse clock, at most a second) until a file made now
/// is stamped later than every item of `paths` was.
func waitForNextTimestampTick(after paths: [[UInt8]], plus margin: Int64 = 0) throws {
    var latest = timespec()
    for path in paths {
        var info = stat()
        guard withCString(path, { lstat($0, &info) }) == 0 else { throw ConformanceFailure("lstat: \(Errno(rawValue: errno))") }
        if (info.st_ctim.tv_sec, info.st_ctim.tv_nsec) > (latest.tv_sec, latest.tv_nsec) { latest = info.st_ctim }
    }
    let shifted = Int64(latest.tv_nsec) + margin
    latest.tv_sec += Int(shifted / 1_000_000_000)
    latest.tv_nsec = Int(shifted % 1_000_000_000)
    let deadline = ContinuousClock.now + .seconds(1)
    var now = timespec()
    repeat {
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        if (now.tv_sec, now.tv_nsec) > (latest.tv_sec, latest.tv_nsec) { return }
    } while ContinuousClock.now < deadline
    throw ConformanceFailure("the file system's clock did not move past \(latest.tv_sec).\(latest.tv_nsec) within a second")
}
#endif
