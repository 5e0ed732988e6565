#if os(Linux)
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

    /// The rebuild after an overflow compares models that keep no times, so it tells what
    /// changed in place from the change times it reads: it read them for regular files only,
    /// and a symlink's `touch -h -d` (or a FIFO's) lost to the overflow was never told.
    @Test("new times of a file, a symlink and a FIFO lost to an overflow are told by the rebuild")
    func timesLostToOverflow() async throws {
        let tree = try ScratchTree()
        try tree.write("f", "f")
        try tree.symlink("s", pointingTo: "nowhere")
        try tree.makeFIFO("p")
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try OverflowInjectingKernel()
        }
        var reader = try await MarkerCollector(stream)

        try tree.write(RelativePath(bytes: OverflowInjectingKernel.triggerName))
        for name in ["f", "s", "p"] {
            try tree.setTimes(RelativePath(name), seconds: 631_152_000)  // 1990: older than any "changed since"
        }
        try tree.write("marker", "written after every change above")
        try tree.write(RelativePath(bytes: OverflowInjectingKernel.releaseName))
        try await reader.collect(until: "marker")
        let events = reader.events
        #expect(events.contains { $0.kind == .overflow }, "the injected overflow was not reported")
        for name in ["f", "s", "p"] {
            #expect(events.contains { $0.path.lastComponent?.string == name && $0.kind == .attributesChanged },
                    "new times of \(name), lost to the overflow, were not told: \(events.map { "\($0.kind) \($0.path)" })")
        }
        await reader.stop()
    }
}
#endif
