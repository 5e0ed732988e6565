import FileSystemEventsConformance
@testable import FileSystemEventsCore
import SystemPackage
import Testing

/// The echo of a stable-ID stamp (``StableIDTracker``), event by event: the tracker is fed
/// the events a kernel backend would deliver, in the order it would, against a real tree, so
/// each race is played the same way every time. What is checked: a real change that arrives
/// with or after the echo is reported, and an echo with nothing else behind it is not.
@Suite struct StableIDStampEchoTests {
    /// A tracker loaded with the empty tree at `tree.root`.
    static func tracker(for tree: ScratchTree) throws -> StableIDTracker {
        var tracker = StableIDTracker(roots: [tree.root], writes: true)
        tracker.load([try FileTreeSnapshot.scan(tree.root)])
        return tracker
    }

    static func event(_ kind: FileSystemEvent.Kind, _ path: FilePath, previous: FilePath? = nil, synthetic: Bool = false) -> FileSystemEvent {
        FileSystemEvent(kind: kind, path: path, previousPath: previous, itemType: .file, isSynthetic: synthetic)
    }

    /// Creates `name` on disk and has the tracker handle its `created`, which stamps it.
    static func created(_ name: String, in tree: ScratchTree, by tracker: inout StableIDTracker) throws {
        try tree.write(RelativePath(name), "content of \(name)")
        let told = tracker.process([event(.created, tree.path(RelativePath(name)))])
        #expect(told.first?.stableID != nil, "\(name) was not stamped: \(told)")
    }

    /// A tracker over `tree` that has handled the creation of each of `names`, and so stamped it.
    static func tracker(for tree: ScratchTree, afterCreating names: String...) throws -> StableIDTracker {
        var tracker = try Self.tracker(for: tree)
        for name in names { try created(name, in: tree, by: &tracker) }
        return tracker
    }

    @Test("an echo with nothing behind it is not reported, from the kernel or from a poll")
    func plainEcho() throws {
        let tree = try ScratchTree()
        var tracker = try Self.tracker(for: tree, afterCreating: "kernel", "polled")
        let told = tracker.process([
            Self.event(.attributesChanged, tree.path("kernel")),
            // A poll sees the change time the stamp moved and reports a `modified`.
            Self.event(.modified, tree.path("polled"), synthetic: true),
        ])
        #expect(told.isEmpty, "echoes reported: \(told)")
    }

    /// `watch R R --stable-ids`: one snapshot per root named, of the same tree. Loaded twice,
    /// the second tree (which only read the IDs the first had just written) replaced the first,
    /// and with it what the first knew of its stamps' echoes: every item was reported.
    @Test("a root named twice: the stamps written at ready are known once, and their echoes are not reported")
    func rootNamedTwice() throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("d")
        try tree.write("d/f", "f")
        try tree.write("g", "g")
        var tracker = StableIDTracker(roots: [tree.root, tree.root], writes: true)
        let snapshot = try FileTreeSnapshot.scan(tree.root)
        tracker.load([snapshot, snapshot])
        let told = tracker.process(["d", "d/f", "g"].map { Self.event(.attributesChanged, tree.path(RelativePath($0))) })
        #expect(told.isEmpty, "echoes reported: \(told.map(\.path))")
    }

    @Test("a chmod whose IN_ATTRIB the kernel merged with the stamp's echo is reported")
    func chmodMergedWithEcho() throws {
        let tree = try ScratchTree()
        var tracker = try Self.tracker(for: tree, afterCreating: "f")
        try tree.changeMode("f", to: 0o600)
        // One event: the stamp's IN_ATTRIB and the chmod's, merged in the kernel's queue.
        let told = tracker.process([Self.event(.attributesChanged, tree.path("f"))])
        #expect(told.map(\.kind) == [.attributesChanged], "the chmod was lost: \(told)")
    }

    @Test("a kernel's modified is reported even where the file keeps its size and time")
    func writeKeepingTimes() throws {
        let tree = try ScratchTree()
        var tracker = try Self.tracker(for: tree, afterCreating: "f")
        // `cp -p` over it: same size, and the modification time put back. The IN_MODIFY is
        // a write, whatever the status looks like; the stamp's echo may still follow.
        try tree.rewriteKeepingTimes("f", "CONTENT OF F")
        let told = tracker.process([
            Self.event(.modified, tree.path("f")),
            Self.event(.attributesChanged, tree.path("f")),
        ])
        #expect(told.first?.kind == .modified, "the write was lost: \(told)")
    }

    @Test("stamps move with their items: an exchange, then a change at each name")
    func stampsFollowAnExchange() throws {
        let tree = try ScratchTree()
        var tracker = try Self.tracker(for: tree, afterCreating: "a", "b")
        // b's echo arrives; a's is still to come when the two are exchanged.
        #expect(tracker.process([Self.event(.attributesChanged, tree.path("b"))]).isEmpty)
        try tree.exchange("a", "b")
        let exchanged = tracker.process([Self.event(.exchanged, tree.path("a"), previous: tree.path("b"))])
        #expect(exchanged.count == 1)
        // The item now at `a` (b's, its echo heard) is changed for real; a's echo comes at `b`.
        try tree.changeMode("a", to: 0o600)
        let told = tracker.process([
            Self.event(.attributesChanged, tree.path("a")),
            Self.event(.attributesChanged, tree.path("b")),
        ])
        #expect(told.map(\.path) == [tree.path("a")], "a real change was taken for an echo, or an echo reported: \(told)")
    }

    @Test("stamps move with a renamed directory's items")
    func stampsFollowADirectoryRename() throws {
        let tree = try ScratchTree()
        var tracker = try Self.tracker(for: tree)
        try tree.makeDirectory("d")
        _ = tracker.process([FileSystemEvent(kind: .created, path: tree.path("d"), itemType: .directory, isSynthetic: false)])
        #expect(tracker.process([FileSystemEvent(kind: .attributesChanged, path: tree.path("d"), itemType: .directory, isSynthetic: false)]).isEmpty)
        try Self.created("d/f", in: tree, by: &tracker)
        try tree.rename("d", to: "e")
        _ = tracker.process([FileSystemEvent(kind: .renamed, path: tree.path("e"), previousPath: tree.path("d"), itemType: .directory, isSynthetic: false)])
        let told = tracker.process([Self.event(.attributesChanged, tree.path("e/f"))])
        #expect(told.isEmpty, "the echo of d/f's stamp, heard as e/f, was reported: \(told)")
    }

    /// The identity of what stands at `name` now.
    static func identity(_ name: String, in tree: ScratchTree) throws -> FileIdentity {
        guard case .success(let status) = Syscalls.status(atPath: tree.path(RelativePath(name)).bytes) else {
            throw Errno.noSuchFileOrDirectory
        }
        return status.identity
    }

    static func storedID(_ name: String, in tree: ScratchTree) -> FileStableID? {
        guard case .success(let value?) = Syscalls.extendedAttribute(FileStableID.extendedAttributeName, of: tree.path(RelativePath(name)).bytes) else {
            return nil
        }
        return FileStableID(bytes: value)
    }

    /// Events are handled after the fact: `chmod b` then `exchange a b`, read in one batch,
    /// has the `attributesChanged b` handled when `b` holds a's item. Its ID, read there, was
    /// taken for a copy of a's (still at `a` in the tree): the event said `duplicateOf a`, and a
    /// fresh ID was written over the one a's item carries.
    @Test("a change handled after an exchange moved another item to its path: no duplicate, and no ID rewritten")
    func changeHandledAfterAnExchange() throws {
        let tree = try ScratchTree()
        var tracker = try Self.tracker(for: tree)
        for name in ["a", "b"] {
            try tree.write(RelativePath(name), name)
            let event = FileSystemEvent(kind: .created, path: tree.path(RelativePath(name)), itemType: .file, isSynthetic: false,
                                        identity: try Self.identity(name, in: tree))
            _ = tracker.process([event])
        }
        let idOfA = Self.storedID("a", in: tree), idOfB = Self.storedID("b", in: tree)
        #expect(idOfA != nil && idOfB != nil && idOfA != idOfB)
        try tree.changeMode("b", to: 0o600)
        try tree.exchange("a", "b")
        let told = tracker.process([
            Self.event(.attributesChanged, tree.path("b")),
            Self.event(.exchanged, tree.path("a"), previous: tree.path("b")),
        ])
        #expect(told.allSatisfy { $0.duplicateOf == nil }, "\(told.map { "\($0.kind) \($0.path) duplicateOf \($0.duplicateOf.map(\.string) ?? "-")" })")
        #expect(Self.storedID("b", in: tree) == idOfA && Self.storedID("a", in: tree) == idOfB, "an ID on disk was rewritten")
        #expect(told.first?.stableID == idOfB, "the change at b was b's item's")
    }

    /// `echo > .doc.tmp; mv .doc.tmp doc` told as `created .doc.tmp`, `renamed doc`, handled
    /// once both happened: the item was not found at `.doc.tmp`, went without an ID to `doc`,
    /// and was never stamped (30 saves in a burst left the last `doc` without an ID).
    @Test("an item created and renamed before its events are handled is identified where it went, and both events carry its ID")
    func createdThenRenamedBeforeHandled() throws {
        let tree = try ScratchTree()
        var tracker = try Self.tracker(for: tree)
        try tree.write(".doc.tmp", "v1")
        let identity = try Self.identity(".doc.tmp", in: tree)
        try tree.rename(".doc.tmp", to: "doc")
        let told = tracker.process([
            FileSystemEvent(kind: .created, path: tree.path(".doc.tmp"), itemType: .file, isSynthetic: false, identity: identity),
            FileSystemEvent(kind: .renamed, path: tree.path("doc"), previousPath: tree.path(".doc.tmp"), itemType: .file,
                            isSynthetic: false, identity: identity),
        ])
        let stored = Self.storedID("doc", in: tree)
        #expect(stored != nil, "doc was never stamped")
        #expect(told.map(\.stableID) == [stored, stored], "\(told.map(\.stableID))")

        // The same save told in two batches (the `created` read alone): identified at the rename.
        try tree.write(".doc2.tmp", "v2")
        let second = try Self.identity(".doc2.tmp", in: tree)
        try tree.rename(".doc2.tmp", to: "doc2")
        let created = tracker.process([
            FileSystemEvent(kind: .created, path: tree.path(".doc2.tmp"), itemType: .file, isSynthetic: false, identity: second)
        ])
        let renamed = tracker.process([
            FileSystemEvent(kind: .renamed, path: tree.path("doc2"), previousPath: tree.path(".doc2.tmp"), itemType: .file,
                            isSynthetic: false, identity: second)
        ])
        #expect(created.first?.stableID == nil)
        #expect(Self.storedID("doc2", in: tree) != nil && renamed.first?.stableID == Self.storedID("doc2", in: tree),
                "doc2 unstamped, or its rename without its ID: \(renamed.map(\.stableID))")
    }
}
