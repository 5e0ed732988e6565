#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import Testing

/// A file that loses a name in view has its other names looked at once the events read with
/// the loss are applied (`HardLinkIndex.takeLeftBehind()`). Those names were noted when the
/// name was lost, and a rename read after it (`rm c; mv a d`, in one read) left the note
/// naming `a`, which no longer held the file: the index kept `b` alone, and a write through
/// `b` was not told at `d` (scenario 28 at seed 2118020, on inotifytools, where the owner
/// thread's reads put the two events together).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct LinkLeftBehindTests {
    @Test("a name of a hard-linked file renamed in the read that removed another is told of writes through the rest")
    func renamedAfterAnotherNameWasRemoved() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("a", "one file, three names")
        try tree.hardLink("b", to: "a")
        try tree.hardLink("c", to: "a")
        let (collector, before) = try await ReadTogether.watch(tree, readingTogether: { [tree] in
            try? tree.remove("c")
            try? tree.rename("a", to: "d")
        })
        var reader = collector
        try tree.append("b", " and more")
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()

        #expect(tree.exists("d") && !tree.exists("c"), "the changes were not made")
        ReadTogether.expectReplayMatches(tree, before, reader.events)
    }

    /// A write through a new name whose creation waits is placed by the name's examination. If
    /// the name is gone by then, every file with several names is looked at for a change,
    /// and the file written had lost its other name in the same read: it had one name left,
    /// and was not looked at.
    @Test("a file written through a new link that is gone before it is examined, having lost its other name meanwhile, is told modified")
    func writtenThroughGoneLinkAfterLosingAName() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("a", "one file, two names")
        try tree.hardLink("b", to: "a")
        try tree.write("t", "another file")
        let (events, before) = try await ReadTogether.eventsOf(tree, readingTogether: { [tree] in
            try? tree.hardLink("c", to: "a")
            try? tree.append("c", " written through c")
            try? tree.remove("b")
            try? tree.rename("t", to: "c")
        })

        #expect(tree.exists("c") && !tree.exists("b") && !tree.exists("t"), "the changes were not made")
        ReadTogether.expectReplayMatches(tree, before, events)
    }
}
#endif
