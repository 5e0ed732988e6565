#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage
import Testing

/// A new hard link written through and renamed before it was examined (`ln a b; echo >> b;
/// mv b c`) tells `a` modified also when `b` was examined, and found gone, before the rename
/// was read (``GoneWrittenLinkKernel``): the write was dropped with `b`, the rename then had
/// nothing to carry to `c`, and `a` was never told (scenario 122 beneath a held consumer, once
/// in a stress loop on inotifytools).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct GoneWrittenLinkTests {
    @Test("a write through a new link found gone goes with the rename read after it")
    func writtenLinkFoundGoneThenRenamed() async throws {
        let tree = try ScratchTree()
        try tree.write("a", "one")
        var options = WatchOptions(roots: [tree.root])
        // One waiting creation reaches the limit: `b` is examined at once, the queue busy.
        options.bufferLimit = 1
        let source = tree.path("b").string
        let destination = tree.path("c").string
        let stream = InotifyEventSource.updates(options: options) { () throws(FileSystemEventsError) in
            try GoneWrittenLinkKernel(name: "b", movingFrom: source, to: destination)
        }
        var reader = try await MarkerCollector(stream)
        let root = tree.absolute(.root, in: .root)
        let before = DiskTree.read(root: root, recursive: true) { _, _ in true }

        try tree.hardLink("b", to: "a")
        try tree.append("b", " two")
        // The kernel renames b to c before the watcher looks at b.
        try await reader.collect(until: "c")
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()

        #expect(tree.exists("c") && !tree.exists("b"), "b was not renamed: nothing was tested")
        let told = reader.events.map { "\($0.kind) \($0.path) \($0.isSynthetic ? "[synthetic]" : "")" }.joined(separator: "\n")
        #expect(reader.events.contains { $0.kind == .modified && $0.path == tree.path("a") }, "\(told)")
        let after = DiskTree.read(root: root, recursive: true) { _, _ in true }
        var model = ReplayModel(initial: before, root: tree.root)
        for event in reader.events { model.apply(event) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(problems)\n\(told)")
    }
}
#endif
