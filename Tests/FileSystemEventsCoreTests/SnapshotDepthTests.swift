import FileSystemEventsCore
import SystemPackage
import Testing

/// A snapshot tree as deep as a chain of directories can be, on the thread a test (an app)
/// runs on, whose stack is a few MiB: the diff, the encoding, the decoding and the release
/// descend one call per level. The deployment build takes some 800 bytes of stack a level
/// and crashed an 8 MiB thread under 10,000 levels; this debug build takes some 7.7 KB a level
/// in the diff, and 5,000 levels crash such a thread. (Deeper costs time: the diff builds each
/// level's path, and 50,000 levels took 267 s here.)
@Suite struct SnapshotDepthTests {
    private static let depth = 5_000

    /// `d/d/…/d`, `depth` directories deep, made in memory.
    private static func chain(depth: Int, withFileAtBottom: Bool) -> RootSnapshot {
        let top = SnapshotDirectory(parent: nil, name: [])
        var current = top
        for level in 0..<depth {
            let child = SnapshotDirectory(parent: current, name: Array("d".utf8))
            current.insert(SnapshotEntry(name: Array("d".utf8), status: FileStatus(device: 1, inode: UInt64(level + 10), mode: 0o040755),
                                         directory: child))
            current = child
        }
        if withFileAtBottom {
            current.insert(SnapshotEntry(name: Array("deepest".utf8), status: FileStatus(device: 1, inode: 5, mode: 0o100644, size: 1)))
        }
        return RootSnapshot(status: FileStatus(device: 1, inode: 2, mode: 0o040755), tree: top)
    }

    @Test("a chain 5,000 deep is diffed, encoded, decoded, counted and let go of on a test's own thread")
    func deepChainOnAnyThread() throws {
        let root = FilePath("/chain")
        let before = FileTreeSnapshot(root: root, snapshot: Self.chain(depth: Self.depth, withFileAtBottom: false), options: WatchOptions(roots: [root]),
                                      recordsAttributes: true)
        let after = FileTreeSnapshot(root: root, snapshot: Self.chain(depth: Self.depth, withFileAtBottom: true), options: WatchOptions(roots: [root]),
                                     recordsAttributes: true)
        #expect(after.entryCount == Self.depth + 1)
        let events = FileTreeSnapshot.events(from: before, to: after)
        #expect(events.count == 1 && events.first?.kind == .created && events.first?.path.lastComponent?.string == "deepest",
                "\(events.prefix(3))")
        let decoded = try FileTreeSnapshot.decoded(from: after.encoded(), file: "/chain.fwsnap", root: root)
        #expect(decoded.entryCount == Self.depth + 1)
        #expect(decoded.regularFiles.count == 1)
    }
}
