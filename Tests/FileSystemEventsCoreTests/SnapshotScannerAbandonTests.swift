import FileSystemEventsConformance
import FileSystemEventsCore
import Foundation
import SystemPackage
import Testing

/// A scan asked to stop (its watch's consumer has gone) stops at the next directory, says its
/// snapshot is partial, and leaves no descriptor open: cancelling a polling watch of a million
/// entries no longer waits for the scan under way, seconds of it.
@Suite struct SnapshotScannerAbandonTests {
    /// 1 root + 40 directories + 40 below them.
    private static let directoryCount = 81

    private static func makeTree() throws -> ScratchTree {
        let tree = try ScratchTree()
        for index in 0..<40 {
            try tree.makeDirectories(RelativePath("d\(index)/inner"))
            try tree.write(RelativePath("d\(index)/inner/file"), "x")
        }
        return tree
    }

    /// Descriptors of this process that lead into `base` (the test process runs other suites
    /// at once, so only these are counted).
    private static func descriptors(into base: FilePath) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)") else { return nil }
            return target.hasPrefix(base.string) ? target : nil
        }
    }

    @Test("a scan asked once per directory lists everything when never told to stop")
    func askedOncePerDirectory() throws {
        let tree = try Self.makeTree()
        defer { tree.remove() }
        var asks = 0
        let result = try SnapshotScanner().scan(root: tree.root, abandoning: {
            asks += 1
            return false
        })
        #expect(!result.isAbandoned)
        #expect(asks == Self.directoryCount)
        #expect(result.snapshot.entryCount == 120)
    }

    @Test("a scan told to stop lists no further directory, is marked partial and closes its descriptors",
          arguments: [1, 2, 7, 40, 80])
    func stopsAtTheNextDirectory(after allowed: Int) throws {
        let tree = try Self.makeTree()
        defer { tree.remove() }
        var asks = 0
        let result = try SnapshotScanner().scan(root: tree.root, abandoning: {
            asks += 1
            return asks > allowed
        })
        #expect(result.isAbandoned)
        #expect(asks == allowed + 1, "asked again after it said stop")
        #expect(result.snapshot.entryCount < 120)
        #expect(Self.descriptors(into: tree.base).isEmpty, "\(Self.descriptors(into: tree.base))")
    }

    @Test("a scan sharing with the previous one and told to stop leaves the previous tree whole")
    func previousTreeStaysWhole() throws {
        let tree = try Self.makeTree()
        defer { tree.remove() }
        let scanner = SnapshotScanner()
        let previous = try scanner.scan(root: tree.root).snapshot
        var asks = 0
        let result = try scanner.scan(root: tree.root, sharingWith: previous, abandoning: {
            asks += 1
            return asks > 20
        })
        #expect(result.isAbandoned)
        #expect(previous.entryCount == 120)
    }
}
