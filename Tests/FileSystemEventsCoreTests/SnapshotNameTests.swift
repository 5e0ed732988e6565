import FileSystemEventsConformance
import FileSystemEventsCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `SnapshotName` keeps short names inside the entry. Its order and equality must be exactly
/// those of the byte arrays it replaced (the snapshot's sorted listings, the merge walk and the
/// binary search depend on it), on both sides of the inline limit.
@Suite struct SnapshotNameTests {
    /// Names around the 11-byte inline limit (and the 15-byte one it had), sharing prefixes,
    /// with high bytes (UTF-8 and invalid UTF-8), in every combination.
    private static var names: [[UInt8]] {
        var names: [[UInt8]] = [[0x61], [0x62], [0xFF], [0x61, 0xFF], [0xC3, 0xA9], [0x7F]]
        for length in [1, 2, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 255] {
            let base = (0..<length).map { UInt8(0x61 + $0 % 26) }
            names.append(base)
            var higher = base
            higher[length - 1] = 0xFE
            names.append(higher)
            var lower = base
            lower[0] = 0x01
            names.append(lower)
        }
        var generator = SplitMix64(seed: 17)
        for _ in 0..<200 {
            let length = Int(generator.next() % 24) + 1
            names.append((0..<length).map { _ in UInt8(generator.next() % 255) + 1 })
        }
        return names
    }

    @Test("a name of up to 11 bytes fits in the 12 bytes of the value")
    func layout() {
        #expect(MemoryLayout<SnapshotName>.size == 12)
        #expect(SnapshotName.inlineCapacity == 11)
    }

    @Test("bytes, count and C string round-trip on both sides of the inline limit")
    func roundTrip() {
        for name in Self.names {
            let stored = SnapshotName(name)
            #expect(stored.bytes == name)
            #expect(stored.count == name.count)
            #expect(stored.withBytes { Array($0) } == name)
            #expect(withCString(stored) { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } == name)
            #expect([UInt8]().appendingComponent(stored) == name)
            #expect([0x78].appendingComponent(stored) == [0x78, 0x2F] + name)
        }
    }

    @Test("order and equality are those of the byte arrays")
    func orderMatchesBytes() {
        let names = Self.names
        for lhs in names {
            let left = SnapshotName(lhs)
            for rhs in names {
                let right = SnapshotName(rhs)
                let expected = compareBytes(lhs, rhs).signum()
                #expect(SnapshotName.compare(left, right).signum() == expected, "\(lhs) vs \(rhs)")
                #expect(SnapshotName.compare(left, rhs).signum() == expected, "\(lhs) vs \(rhs)")
                #expect((left == right) == (lhs == rhs), "\(lhs) vs \(rhs)")
            }
        }
    }

    @Test("a directory's stored name is found by its bytes and shared, on both sides of 16 bytes alike")
    func storedNameIsShared() {
        // Sorted in, and set aside (``SnapshotDirectory/insert(_:)``) once the directory is
        // large: both are searched.
        let names = Self.names + [Array("shared-prefix-16-bytes-a".utf8), Array("shared-prefix-16-bytes-b".utf8),
                                  Array("shared-prefix-16".utf8), Array("shared-prefix-16-bytes".utf8)]
        let directory = SnapshotDirectory(parent: nil, name: [])
        var unique: [[UInt8]] = []
        for (index, name) in names.enumerated() where !unique.contains(name) {
            unique.append(name)
            directory.insert(SnapshotEntry(name: SnapshotName(name), status: FileStatus(device: 1, inode: UInt64(index + 1), mode: 0o100644)))
        }
        for name in unique {
            let found = name.withUnsafeBytes { directory.storedName(equalTo: $0) }
            #expect(found?.bytes == name, "\(name)")
            guard name.count > SnapshotName.inlineCapacity, let found, let entry = directory.entry(named: name) else { continue }
            #expect(Self.storage(of: found) == Self.storage(of: entry.name), "\(name): not the stored copy")
        }
        for name in unique where !name.isEmpty {
            for absent in [name + [0x01], Array(name.dropLast()) + [name.last! &+ 1]] where !unique.contains(absent) {
                #expect(absent.withUnsafeBytes { directory.storedName(equalTo: $0) } == nil, "\(absent)")
            }
        }
    }

    @Test("a scan of an unchanged directory keeps the previous scan's long names, not copies")
    func scanSharesLongNames() throws {
        let tree = try ScratchTree()
        let long = (0..<40).map { "a-name-longer-than-eleven-bytes-\($0).txt" }
        for name in long + ["short"] { try tree.write(RelativePath(name)) }
        try tree.makeDirectory("a-directory-with-a-long-name")
        let scanner = SnapshotScanner()
        let first = try scanner.scan(root: tree.root).snapshot
        let firstNames = try #require(first.tree).entries.map(\.name.bytes)
        let second = try scanner.scan(root: tree.root).snapshot
        let secondNames = try #require(second.tree).entries.map(\.name)
        #expect(secondNames.map(\.bytes) == firstNames)
        // Scanned again with the second scan to share from: each long name is the second scan's.
        let third = try scanner.scan(root: tree.root, sharingWith: second).snapshot
        let thirdEntries = try #require(third.tree).entries
        #expect(thirdEntries.map(\.name.bytes) == firstNames)
        for (entry, previous) in zip(thirdEntries, secondNames) where previous.count > SnapshotName.inlineCapacity {
            #expect(Self.storage(of: entry.name) == Self.storage(of: previous), "\(entry.name)")
        }
    }

    /// Where a name kept on the heap has its bytes (`nil` for an inline one).
    private static func storage(of name: SnapshotName) -> UnsafeRawPointer? {
        guard name.count > SnapshotName.inlineCapacity else { return nil }
        return name.withBytes { $0.baseAddress }
    }
}
