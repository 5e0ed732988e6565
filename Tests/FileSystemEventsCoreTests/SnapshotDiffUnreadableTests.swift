import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// A directory that a scan cannot list keeps its last listing (polling, `changes --since`): what
/// it held is not told removed. That listing must be the one the diff leaves, not the one it
/// started from: an item the diff finds moved out of it is no longer in it.
@Suite struct SnapshotDiffUnreadableTests {
    /// A scan of `tree` in which the directory at `unreadable` is taken as one that could not be
    /// listed (as a scan run by a user without read permission finds it; root lists everything).
    private static func scan(_ tree: ScratchTree, unreadable: String? = nil) throws -> SnapshotDirectory {
        let snapshot = try #require(try SnapshotScanner().scan(root: tree.root).snapshot.tree)
        if let unreadable {
            let directory = try #require(snapshot.entry(named: Array(unreadable.utf8))?.directory)
            directory.entries = []
            directory.isUnreadable = true
        }
        return snapshot
    }

    private static func described(_ events: [FileSystemEvent], root: FilePath) -> [String] {
        events.map { event in
            let path = String(event.path.string.dropFirst(root.string.count + 1))
            let previous = event.previousPath.map { " <- " + String($0.string.dropFirst(root.string.count + 1)) } ?? ""
            return "\(event.kind) \(path)\(previous)"
        }
    }

    @Test("a file moved out of a directory that is renamed and cannot be listed leaves its kept listing; moved back once it is readable, it is told there anew")
    func itemMovedOutOfUnreadableDirectory() throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.makeDirectories("A")
        try tree.makeDirectories("B")
        try tree.write("A/x", "x")
        try tree.write("A/keep", "k")
        let first = try Self.scan(tree)
        // Between two scans: `chmod 0 A; mv A/x B/y; mv A A2`.
        try tree.rename("A/x", to: "B/y")
        try tree.rename("A", to: "A2")
        let second = try Self.scan(tree, unreadable: "A2")
        let root = PathBuilder(root: tree.root)
        let told = Self.described(SnapshotDiff.events(from: first, to: second, root: root), root: tree.root)
        #expect(told.contains("renamed A2 <- A") && told.contains("renamed B/y <- A2/x"), "\(told)")
        // The kept listing is the diff's result: `keep`, not `x`, which went to `B/y`.
        let kept = try #require(second.entry(named: Array("A2".utf8))?.directory)
        #expect(kept.entries.filter { !$0.isVacant }.map { String(decoding: $0.name.bytes, as: UTF8.self) } == ["keep"])
        // Then `mv B/y A2/x; chmod 755 A2`: `x` is back in `A2`, a path the consumer no longer
        // has; told `modified A2/x` (the kept `x` taken for the same item), it never got it.
        try tree.rename("B/y", to: "A2/x")
        let third = try Self.scan(tree)
        let toldAfter = Self.described(SnapshotDiff.events(from: second, to: third, root: root), root: tree.root)
        // (A rename moves the file's change time, which a scan tells as well.)
        #expect(toldAfter.first == "renamed A2/x <- B/y" && !toldAfter.contains { $0.hasPrefix("removed") || $0.hasPrefix("created") },
                "\(toldAfter)")
    }
}
