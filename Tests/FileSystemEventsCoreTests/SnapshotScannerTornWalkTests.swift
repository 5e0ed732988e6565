import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// A scan whose every walk is torn by an exchange (two directories swapped while the walk is
/// between them, each of three walks) must still hold each directory once, at a place the
/// disk held it. Taken as it was, the third walk listed one directory at both names and the
/// other at neither; a polling watch then told consumers one inode `created` at two paths
/// and, once such a tree nested, `removed` events for a directory inside itself.
@Suite struct SnapshotScannerTornWalkTests {
    /// What a snapshot holds at `a` and `b`: each one's identity and the names in it.
    private struct Pair: Equatable, CustomStringConvertible {
        var a: (FileIdentity, [String])?
        var b: (FileIdentity, [String])?

        init(_ tree: SnapshotDirectory) {
            func side(_ name: String) -> (FileIdentity, [String])? {
                guard let entry = tree.entry(named: Array(name.utf8)), let directory = entry.directory else { return nil }
                return (entry.status.identity, directory.entries.map { String(decoding: $0.name.bytes, as: UTF8.self) })
            }
            a = side("a")
            b = side("b")
        }

        init(a: (FileIdentity, [String])?, b: (FileIdentity, [String])?) {
            self.a = a
            self.b = b
        }

        static func == (lhs: Pair, rhs: Pair) -> Bool {
            lhs.a?.0 == rhs.a?.0 && lhs.a?.1 == rhs.a?.1 && lhs.b?.0 == rhs.b?.0 && lhs.b?.1 == rhs.b?.1
        }

        var description: String { "a: \(a.map { "\($0.0) \($0.1)" } ?? "none"), b: \(b.map { "\($0.0) \($0.1)" } ?? "none")" }
    }

    /// `a` holding `fa` and `b` holding `fb`, and the two directories' identities.
    private static func makeTree() throws -> (ScratchTree, first: FileIdentity, second: FileIdentity) {
        let tree = try ScratchTree()
        try tree.makeDirectories("a")
        try tree.makeDirectories("b")
        try tree.write("a/fa", "a")
        try tree.write("b/fb", "b")
        let first = try Syscalls.status(tree.path("a")).get().identity
        let second = try Syscalls.status(tree.path("b")).get().identity
        return (tree, first, second)
    }

    /// Scans `tree` exchanging `a` and `b` while the walk lists `a`, on every walk: each walk
    /// asks before the root, `a` and `b` in turn, and meets `a`'s directory again at `b`.
    private static func scanExchanging(_ tree: ScratchTree, sharingWith previous: RootSnapshot?) throws -> (SnapshotScanner.Result, asks: Int) {
        var asks = 0
        var failure: (any Error)?
        let result = try SnapshotScanner().scan(root: tree.root, sharingWith: previous, abandoning: {
            asks += 1
            if asks % 3 == 2 {
                do { try tree.exchange("a", "b") } catch { failure = error }
            }
            return false
        })
        if let failure { throw failure }
        return (result, asks)
    }

    @Test("torn on every walk, a scan after another keeps what that one found at a place it cannot vouch for")
    func keepsThePreviousScan() throws {
        let (tree, first, second) = try Self.makeTree()
        defer { tree.remove() }
        let previous = try SnapshotScanner().scan(root: tree.root).snapshot
        let (result, asks) = try Self.scanExchanging(tree, sharingWith: previous)
        // Three walks, each torn: the scenario happened.
        #expect(asks == 9)
        #expect(result.isTorn)
        let found = Pair(try #require(result.snapshot.tree))
        let before = Pair(a: (first, ["fa"]), b: (second, ["fb"]))
        let swapped = Pair(a: (second, ["fb"]), b: (first, ["fa"]))
        #expect(found == before || found == swapped, "a state the disk never held: \(found)")
        // The previous scan is still the tree it recorded, for the diff against it.
        #expect(Pair(try #require(previous.tree)) == before)
        // Three exchanges: the next scan finds them swapped.
        let next = try SnapshotScanner().scan(root: tree.root, sharingWith: result.snapshot)
        #expect(!next.isTorn)
        #expect(Pair(try #require(next.snapshot.tree)) == swapped)
    }

    @Test("torn on every walk, a first scan leaves out the directories it found at two places")
    func firstScanLeavesThemOut() throws {
        let (tree, first, second) = try Self.makeTree()
        defer { tree.remove() }
        let (result, asks) = try Self.scanExchanging(tree, sharingWith: nil)
        #expect(asks == 9)
        let found = Pair(try #require(result.snapshot.tree))
        let allowed: [(FileIdentity, [String])?] = [nil, (first, ["fa"]), (second, ["fb"])]
        #expect(allowed.contains { $0?.0 == found.a?.0 && $0?.1 == found.a?.1 }, "\(found)")
        #expect(allowed.contains { $0?.0 == found.b?.0 && $0?.1 == found.b?.1 }, "\(found)")
        #expect(found.a == nil || found.b == nil || found.a!.0 != found.b!.0, "one directory at both names: \(found)")
    }
}
