import FileSystemEventsConformance
import FileSystemEventsCore
import Glibc
import SystemPackage
import Testing

/// A directory the scan will enter is examined through the descriptor it is opened with, not by
/// name as well (`SnapshotScanner`'s listing holds a place for it meanwhile): one path lookup per
/// directory fewer, as in the C walk the polling figures are measured against. What the
/// snapshot holds must not change: every directory's status is its own, and a directory that
/// cannot be searched is still told apart from one that is empty.
@Suite struct SnapshotScannerDirectoryExaminationTests {
    /// Every entry below `directory`, with its path relative to the root.
    private static func entries(below directory: SnapshotDirectory, path: String = "") -> [(String, SnapshotEntry)] {
        var found: [(String, SnapshotEntry)] = []
        for entry in directory.entries {
            let name = String(decoding: entry.name.bytes, as: UTF8.self)
            let relative = path.isEmpty ? name : path + "/" + name
            found.append((relative, entry))
            if let child = entry.directory { found += entries(below: child, path: relative) }
        }
        return found
    }

    @Test("each directory in a snapshot has the status statx gives its path, and no entry is a place held")
    func directoriesHaveTheirOwnStatus() throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        for directory in ["a", "a/b", "a/b/c", "empty", "d/e"] { try tree.makeDirectories(RelativePath(directory)) }
        for file in ["top.txt", "a/one.txt", "a/b/two.txt", "d/e/three.txt"] { try tree.write(RelativePath(file), file) }
        try tree.symlink("link", pointingTo: "a")
        try tree.changeMode("a/b", to: 0o750)
        let result = try SnapshotScanner().scan(root: tree.root)
        let tree0 = try #require(result.snapshot.tree)
        let found = Self.entries(below: tree0)
        #expect(Set(found.map(\.0)) == ["a", "a/b", "a/b/c", "empty", "d", "d/e", "top.txt", "a/one.txt", "a/b/two.txt", "d/e/three.txt", "link"])
        for (path, entry) in found {
            let onDisk = try Syscalls.status(atPath: Array(tree.root.appending(path).string.utf8)).get()
            #expect(entry.status == onDisk, "\(path): in the snapshot \(entry.status), on disk \(onDisk)")
            #expect((entry.directory != nil) == (onDisk.itemType == .directory), "\(path): entered \(entry.directory != nil)")
        }
        #expect(result.unreadable.isEmpty && !result.isTorn)
    }

    /// Root searches every directory, so this runs as `nobody` only: scripts/test.sh reruns it so.
    @Test("a directory that may be listed but not searched, holding only directories, is unreadable, not empty",
          .enabled(if: geteuid() != 0, "root searches every directory; scripts/test.sh runs this as nobody"))
    func listedButNotSearched() throws {
        let tree = try ScratchTree()
        defer {
            try? tree.changeMode("listed", to: 0o755)
            tree.remove()
        }
        try tree.makeDirectories("listed/sub/inner")
        try tree.makeDirectories("listed/other")
        try tree.write("listed/sub/inner/file.txt", "x")
        let before = try SnapshotScanner().scan(root: tree.root)
        try tree.changeMode("listed", to: 0o444)
        let after = try SnapshotScanner().scan(root: tree.root)
        #expect(after.unreadable.map { String(decoding: $0.relativePath, as: UTF8.self) } == ["listed"], "\(after.unreadable)")
        let listed = try #require(after.snapshot.tree?.entry(named: Array("listed".utf8))?.directory)
        #expect(listed.isUnreadable)
        // Compared with the scan before, nothing in it is gone.
        let events = SnapshotDiff.events(from: try #require(before.snapshot.tree), to: try #require(after.snapshot.tree),
                                         root: PathBuilder(root: tree.root))
        #expect(!events.contains { $0.kind == .removed }, "\(events.map { "\($0.kind) \($0.path)" })")
    }
}
