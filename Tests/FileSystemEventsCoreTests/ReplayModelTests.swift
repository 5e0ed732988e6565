import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// The conformance suite's replayer must catch what it claims to: a file's content changed
/// after the consumer last read it, with no event to say so, whether or not the file existed
/// at `ready`; and it must not blame a backend for a read that raced a later rename.
@Suite struct ReplayModelTests {
    private func disk(_ tree: ScratchTree) -> DiskTree {
        DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
    }

    private func event(_ kind: FileSystemEvent.Kind, _ tree: ScratchTree, _ path: RelativePath, identity: FileIdentity?) -> FileSystemEvent {
        FileSystemEvent(kind: kind, path: tree.path(path), itemType: .file, isSynthetic: false, identity: identity)
    }

    private func observe(_ tree: ScratchTree, _ path: RelativePath) throws -> ContentObservation {
        try #require(ContentObservation.read(tree.absolute(path, in: .root)))
    }

    @Test("a file created after ready and rewritten without an event is a difference; with a modified event it is not")
    func contentOfNewFiles() throws {
        let tree = try ScratchTree()
        var model = ReplayModel(initial: disk(tree), root: tree.root)
        try tree.write("new.txt", "aaaa")
        let read = try observe(tree, "new.txt")
        model.apply(event(.created, tree, "new.txt", identity: read.identity), observed: read)
        #expect(model.differences(from: disk(tree)).isEmpty)

        try tree.rewriteKeepingTimes("new.txt", "bbbb")
        let differences = model.differences(from: disk(tree))
        #expect(differences.count == 1 && differences.first?.contains("content of new.txt") == true, "\(differences)")

        let reread = try observe(tree, "new.txt")
        model.apply(event(.modified, tree, "new.txt", identity: reread.identity), observed: reread)
        #expect(model.differences(from: disk(tree)).isEmpty)
    }

    @Test("a read of another file than the event named proves nothing")
    func readRacedARename() throws {
        let tree = try ScratchTree()
        try tree.write("a", "first")
        let first = try observe(tree, "a")
        var model = ReplayModel(initial: disk(tree), root: tree.root)
        // The consumer gets `modified a` late: `a` was moved to `b` and a new `a` written since.
        try tree.rename("a", to: "b")
        try tree.write("a", "second!")
        let late = try observe(tree, "a")
        model.apply(event(.modified, tree, "a", identity: first.identity), observed: late)
        model.apply(FileSystemEvent(kind: .renamed, path: tree.path("b"), previousPath: tree.path("a"), itemType: .file,
                                    isSynthetic: false, identity: first.identity))
        model.apply(event(.created, tree, "a", identity: late.identity), observed: late)
        #expect(model.anomalies.isEmpty)
        #expect(model.differences(from: disk(tree)).isEmpty, "\(model.differences(from: disk(tree)))")

        // Without an identity in the event, the read counts only if the same file is still there.
        var blind = ReplayModel(initial: disk(tree), root: tree.root)
        let b = try observe(tree, "b")
        blind.apply(event(.modified, tree, "b", identity: nil), observed: b)
        try tree.rewriteKeepingTimes("b", "FIRST")
        #expect(!blind.differences(from: disk(tree)).isEmpty)
    }

    @Test("every root is replayed and compared, and a rename between roots moves the item")
    func everyRoot() throws {
        let tree = try ScratchTree()
        try tree.write("in-outside.txt", "o", in: .outside)
        let roots = [tree.root, tree.outside]
        let initial = [disk(tree), DiskTree.read(root: tree.absolute(.root, in: .outside), recursive: true) { _, _ in true }]
        var model = ReplayModel(initial: initial, roots: roots)
        try tree.rename("in-outside.txt", to: "moved.txt", from: .outside, to: .root)
        try tree.write("unreported.txt", "x", in: .outside)
        model.apply(FileSystemEvent(kind: .renamed, path: tree.path("moved.txt"), previousPath: tree.path("in-outside.txt", in: .outside),
                                    itemType: .file, isSynthetic: false))
        let after = [disk(tree), DiskTree.read(root: tree.absolute(.root, in: .outside), recursive: true) { _, _ in true }]
        #expect(model.anomalies.isEmpty)
        #expect(model.differences(from: after) == ["missing from replay: root 1 unreported.txt (file)"])
    }
}
