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
        let changes = ChangesBeforeNextRead()
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try ChangingBeforeReadKernel(changes: changes)
        }
        var reader = try await MarkerCollector(stream)
        let root = tree.absolute(.root, in: .root)
        let before = DiskTree.read(root: root, recursive: true) { _, _ in true }

        changes.make { [tree] in
            try? tree.remove("c")
            try? tree.rename("a", to: "d")
        }
        // Wakes the watch, whose next read finds the removal and the rename queued behind it.
        try tree.write("wake", "w")
        try await reader.collect(until: "wake")
        try tree.append("b", " and more")
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")

        #expect(tree.exists("d") && !tree.exists("c"), "the changes were not made")
        let after = DiskTree.read(root: root, recursive: true) { _, _ in true }
        var model = ReplayModel(initial: before, root: tree.root)
        for event in reader.events { model.apply(event) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(problems)\n\(reader.events.map { "\($0.kind) \($0.path)" }.joined(separator: "\n"))")
    }
}
#endif
