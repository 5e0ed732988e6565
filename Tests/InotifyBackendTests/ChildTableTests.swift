#if os(Linux)
@testable import FileSystemEventsInotify
import Testing

/// The inotify model's per-directory table, checked against a dictionary doing the same
/// operations: every lookup, every iteration, and the memory kept after churn.
struct ChildTableTests {
    /// A deterministic generator, so a failure replays.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    }

    static func name(_ number: Int, _ random: inout SplitMix) -> [UInt8] {
        switch number % 4 {
        case 0: return Array("file-\(number).txt".utf8)
        // Long: either side of 255 bytes, where a record's name length takes a second byte.
        case 1: return Array(repeating: UInt8(ascii: "x"), count: 245 + number % 13) + Array("\(number)".utf8)
        case 2: return [0xFF, 0xFE, UInt8(number & 0x7F) | 1, UInt8((number >> 7) & 0x7F) | 1]  // not UTF-8
        default: return Array("\(number)".utf8)
        }
    }

    static func assertSame(_ table: ChildTable, _ expected: [[UInt8]: WatchedEntry], among universe: [[UInt8]]) {
        #expect(table.count == expected.count)
        for name in universe {
            let found = table[name]
            #expect(found?.inode == expected[name]?.inode)
            #expect(found?.type == expected[name]?.type)
            #expect(found?.directory === expected[name]?.directory)
        }
        var listed: [[UInt8]: UInt64] = [:]
        for (name, entry) in table {
            #expect(listed[Array(name)] == nil, "a name is listed twice")
            listed[Array(name)] = entry.inode
        }
        #expect(listed == expected.mapValues(\.inode))
    }

    @Test("random inserts, replacements and removals agree with a dictionary", arguments: [3, 40, 700])
    func agreesWithDictionary(universeSize: Int) {
        var random = SplitMix(state: UInt64(universeSize))
        let universe = (0..<universeSize).map { Self.name($0, &random) }
        var table = ChildTable()
        var expected: [[UInt8]: WatchedEntry] = [:]
        let directory = WatchedDirectory(parent: nil, name: [], root: 0)
        for step in 0..<6_000 {
            let name = universe[random.below(universe.count)]
            if random.below(3) == 0 {
                #expect(table.removeValue(forKey: name)?.inode == expected.removeValue(forKey: name)?.inode)
            } else {
                // Inode numbers either side of 2^32, where a record's inode takes 8 bytes: an item
                // replaced by one of the other width is rewritten in place or moved.
                let inode = random.below(2) == 0 ? random.next() : UInt64(random.below(1 << 20)) << random.below(13)
                let entry = WatchedEntry(type: random.below(2) == 0 ? .file : .directory, inode: inode,
                                         directory: random.below(5) == 0 ? directory : nil)
                table[name] = entry
                expected[name] = entry
            }
            if step % 97 == 0 { Self.assertSame(table, expected, among: universe) }
        }
        Self.assertSame(table, expected, among: universe)
        for name in universe { table[name] = nil }
        #expect(table.isEmpty)
        #expect(table.retainedSlots <= ChildTable.linearLimit)
    }

    @Test("a directory that churns through names keeps memory in proportion to what it holds")
    func churnIsCompacted() {
        var table = ChildTable()
        for number in 0..<50_000 {
            table[Array("kept-\(number % 10)".utf8)] = WatchedEntry(type: .file, inode: 1)
            table[Array("temporary-\(number)".utf8)] = WatchedEntry(type: .file, inode: UInt64(number))
            table[Array("temporary-\(number)".utf8)] = nil
            #expect(table.retainedSlots <= 2 * table.count + ChildTable.linearLimit + 1)
        }
        #expect(table.count == 10)
        #expect(table.keys.map { String(decoding: $0, as: UTF8.self) }.sorted() == (0..<10).map { "kept-\($0)" })
    }

    @Test("a table that grows one item at a time past the 16-bit index keeps every item and its directory")
    func growsPastNarrowIndex() {
        var table = ChildTable()
        let directory = WatchedDirectory(parent: nil, name: [], root: 0)
        let size = 120_000
        for number in 0..<size {
            table[Array("n\(number)".utf8)] = WatchedEntry(type: number % 1_000 == 0 ? .directory : .file, inode: UInt64(number),
                                                          directory: number % 1_000 == 0 ? directory : nil)
        }
        // Remove most, so the table compacts back below the 16-bit index's reach.
        for number in 0..<size where number % 10 != 0 { table[Array("n\(number)".utf8)] = nil }
        #expect(table.count == size / 10)
        #expect(table.retainedSlots <= 2 * table.count + ChildTable.linearLimit + 1)
        for number in stride(from: 0, to: size, by: 10) {
            let entry = table[Array("n\(number)".utf8)]
            #expect(entry?.inode == UInt64(number))
            #expect((entry?.directory === directory) == (number % 1_000 == 0))
        }
        #expect(table[Array("n1".utf8)] == nil)
    }

    @Test("a table reserved for a crawl takes every item, small or large")
    func reservedCapacity() {
        for size in [0, 1, 8, 9, 100, 10_000, 70_000] {
            var table = ChildTable()
            table.reserveCapacity(size, nameBytes: size * 8)
            for number in 0..<size { table[Array("n\(number)".utf8)] = WatchedEntry(type: .file, inode: UInt64(number)) }
            #expect(table.count == size)
            for number in 0..<size { #expect(table[Array("n\(number)".utf8)]?.inode == UInt64(number)) }
            #expect(table[Array("n\(size)".utf8)] == nil)
            // A crawl's index is sized for what the directory holds (at a load of 3/4), not
            // rounded up to a power of two: 135 positions for 100 items, not 256.
            if size > ChildTable.linearLimit {
                #expect(table.indexPositions <= size * 4 / 3 + 2, "\(size) items: \(table.indexPositions) positions")
            }
        }
    }
    @Test("an item whose inode number outgrows its record's field keeps its name, node and neighbours")
    func inodeWidens() {
        let directory = WatchedDirectory(parent: nil, name: [], root: 0)
        for size in [3, 40] {
            var table = ChildTable()
            for number in 0..<size {
                table[Array("n\(number)".utf8)] = WatchedEntry(type: .directory, inode: UInt64(number), directory: directory)
            }
            let wide = UInt64(UInt32.max) + 7
            table[Array("n1".utf8)] = WatchedEntry(type: .directory, inode: wide, directory: directory)
            #expect(table[Array("n1".utf8)]?.inode == wide)
            #expect(table[Array("n1".utf8)]?.directory === directory)
            table[Array("n1".utf8)] = WatchedEntry(type: .file, inode: 5)
            #expect(table[Array("n1".utf8)]?.inode == 5)
            #expect(table[Array("n1".utf8)]?.directory == nil)
            #expect(table.count == size)
            for number in 0..<size where number != 1 {
                #expect(table[Array("n\(number)".utf8)]?.inode == UInt64(number))
                #expect(table[Array("n\(number)".utf8)]?.directory === directory)
            }
            let listed: [String] = table.map { String(decoding: $0.name, as: UTF8.self) }
            let expected: [String] = (0..<size).map { "n\($0)" }
            #expect(listed.sorted() == expected.sorted())
        }
    }

    @Test("names that outgrow the 2-byte index's reach widen it, and every item stays found")
    func widensIndexForLongNames() {
        var table = ChildTable()
        // Room for 1,000 items reserved without their names: the index starts 2 bytes wide,
        // and 200-byte names pass 64 KiB of records long before the index is full.
        table.reserveCapacity(1_000)
        let directory = WatchedDirectory(parent: nil, name: [], root: 0)
        func name(_ number: Int) -> [UInt8] { Array(repeating: UInt8(ascii: "y"), count: 200) + Array("\(number)".utf8) }
        for number in 0..<1_000 {
            table[name(number)] = WatchedEntry(type: .directory, inode: UInt64(number), directory: number % 7 == 0 ? directory : nil)
            if number % 50 == 0 || (300...320).contains(number) {
                for earlier in 0...number {
                    let entry = table[name(earlier)]
                    #expect(entry?.inode == UInt64(earlier), "item \(earlier) after \(number + 1) inserts")
                    #expect((entry?.directory === directory) == (earlier % 7 == 0))
                }
            }
        }
        #expect(table.indexPositions <= 1_000 * 4 / 3 + 2)
        // Removals leave markers of the wider width, which later lookups step over.
        for number in stride(from: 0, to: 1_000, by: 2) { table[name(number)] = nil }
        for number in 0..<1_000 { #expect(table[name(number)]?.inode == (number % 2 == 0 ? nil : UInt64(number))) }
        #expect(table.count == 500)
    }
}
#endif
