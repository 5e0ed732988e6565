import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// The snapshot reader against damaged files: every truncation, seeded random byte flips, and
/// flips with the checksum recomputed (as a crafted file would be). A damaged file must be a
/// typed error that names the problem, never a snapshot that gives wrong events, and never a
/// crash. Seeds are fixed, so a failure reproduces.
@Suite struct SnapshotFileFuzzTests {
    private static func smallSnapshot() throws -> (ScratchTree, [UInt8]) {
        let tree = try ScratchTree()
        try SnapshotPersistenceTests.makeVariedTree(tree)
        let bytes = try FileTreeSnapshot.scan(tree.root).encoded()
        return (tree, bytes)
    }

    @Test("a file cut at any length is `truncated`")
    func everyTruncation() throws {
        let (tree, bytes) = try Self.smallSnapshot()
        #expect(bytes.count > SnapshotArchive.headerSize + 100)
        for length in 0..<bytes.count {
            do {
                _ = try FileTreeSnapshot.decoded(from: Array(bytes[..<length]), file: "cut", root: tree.root)
                Issue.record("a snapshot cut to \(length) of \(bytes.count) bytes was accepted")
            } catch {
                guard case .truncated(_, let expected, let actual) = error else {
                    Issue.record("cut to \(length): \(error)")
                    continue
                }
                #expect(actual == UInt64(length) && expected > actual)
                #expect(error.description.contains("truncated"))
            }
        }
    }

    @Test("random byte flips are always refused, and say what is wrong", arguments: 1...4)
    func byteFlips(seed: UInt64) throws {
        let (tree, bytes) = try Self.smallSnapshot()
        var random = SplitMix64(seed: seed)
        for round in 0..<1_000 {
            var damaged = bytes
            let flips = 1 + Int(random.next() % 3)
            var positions: [Int] = []
            for _ in 0..<flips {
                let position = Int(random.next() % UInt64(bytes.count))
                damaged[position] ^= UInt8(truncatingIfNeeded: 1 + random.next() % 255)
                positions.append(position)
            }
            if damaged == bytes { continue }
            do {
                _ = try FileTreeSnapshot.decoded(from: damaged, file: "flipped", root: tree.root)
                Issue.record("seed \(seed) round \(round): flips at \(positions) were accepted")
            } catch {
                switch error {
                case .notASnapshot: #expect(positions.contains { $0 < 8 })
                case .unsupportedVersion: #expect(positions.contains { (8..<12).contains($0) })
                case .truncated: #expect(positions.contains { (16..<24).contains($0) })
                case .corrupted: break
                default: Issue.record("seed \(seed) round \(round): unexpected \(error)")
                }
            }
        }
    }

    @Test("crafted files (flips with a valid checksum) never crash the reader or break the tree's rules", arguments: 1...4)
    func craftedFiles(seed: UInt64) throws {
        let (tree, bytes) = try Self.smallSnapshot()
        var random = SplitMix64(seed: seed &* 7919)
        var accepted = 0
        for _ in 0..<1_500 {
            var damaged = bytes
            for _ in 0..<(1 + Int(random.next() % 2)) {
                let position = SnapshotArchive.headerSize + Int(random.next() % UInt64(bytes.count - SnapshotArchive.headerSize))
                damaged[position] ^= UInt8(truncatingIfNeeded: 1 + random.next() % 255)
            }
            damaged = SnapshotArchive.resealed(damaged)
            guard let decoded = try? FileTreeSnapshot.decoded(from: damaged, file: "crafted", root: tree.root) else { continue }
            accepted += 1
            // Whatever was accepted obeys the rules the diff relies on, and survives a round trip.
            if let root = decoded.rootSnapshot.tree { Self.checkRules(root) }
            let again = try FileTreeSnapshot.decoded(from: decoded.encoded(), file: "again", root: tree.root)
            #expect(SnapshotPersistenceTests.flatten(again) == SnapshotPersistenceTests.flatten(decoded))
        }
        // Some flips land in values (sizes, times) and make another valid snapshot: the
        // checksum is what refuses those in a real file, as `byteFlips` shows.
        #expect(accepted < 1_500)
    }

    @Test("another format version, another root, another kind of file, a missing file")
    func wrongFiles() throws {
        let (tree, bytes) = try Self.smallSnapshot()
        var future = bytes
        future[8] = 2
        #expect(throws: SnapshotFileError.unsupportedVersion("v2", found: 2, supported: 1)) {
            try FileTreeSnapshot.decoded(from: future, file: "v2", root: tree.root)
        }
        #expect(throws: SnapshotFileError.differentRoot("s", recorded: tree.root, requested: tree.outside)) {
            try FileTreeSnapshot.decoded(from: bytes, file: "s", root: tree.outside)
        }
        #expect(throws: SnapshotFileError.notASnapshot("text")) {
            try FileTreeSnapshot.decoded(from: Array("{\"not\": \"a snapshot\"}".utf8), file: "text", root: tree.root)
        }
        let missing = tree.path("missing.fwsnap", in: .outside)
        #expect(throws: SnapshotFileError.notFound(missing)) { try FileTreeSnapshot.load(from: missing, root: tree.root) }
        #expect(throws: SnapshotFileError.notASnapshot(tree.root)) { try FileTreeSnapshot.load(from: tree.root, root: tree.root) }
        // A trailing byte is corruption, not a longer snapshot.
        #expect(throws: SnapshotFileError.corrupted("long", reason: "1 bytes past the end its header records")) {
            try FileTreeSnapshot.decoded(from: bytes + [0], file: "long", root: tree.root)
        }
    }

    /// Names sorted strictly, free of `/` and NUL, not `.` or `..`; listings only under
    /// directories, and parents linked.
    private static func checkRules(_ directory: SnapshotDirectory) {
        var previous: [UInt8]?
        for entry in directory.entries {
            let name = entry.name.bytes
            #expect(!name.isEmpty && !name.contains(0) && !name.contains(UInt8(ascii: "/")))
            #expect(name != [0x2E] && name != [0x2E, 0x2E])
            if let previous { #expect(compareBytes(previous, name) < 0) }
            previous = name
            if let child = entry.directory {
                #expect(entry.itemType == .directory)
                #expect(child.parent === directory)
                checkRules(child)
            }
        }
    }
}

