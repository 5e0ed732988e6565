@testable import FileSystemEventsCore
import FileSystemEventsConformance
import Testing

/// ``ListingBuffer`` sorts a listing by its names' leading words and moves each entry once:
/// the order must be exactly ``compareBytes(_:_:)``'s (memcmp, shorter prefix first) for
/// names of every length around the 15 bytes kept inline and the 16 the words hold, and every
/// entry must come out once, with its status, however often the buffer grows or is reused.
@Suite struct ListingBufferTests {
    /// Names made to collide: one alphabet of two letters and a high byte, every length from
    /// 1 to 40, many sharing their first 16 bytes and differing only after them.
    static func names(count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SplitMix64(seed: seed)
        let alphabet: [UInt8] = [UInt8(ascii: "a"), UInt8(ascii: "b"), 0xC3]
        let sharedPrefix = [UInt8](repeating: UInt8(ascii: "a"), count: 16)
        var seen = Set<[UInt8]>()
        var names: [[UInt8]] = []
        while names.count < count {
            let length = Int(generator.next() % 40) + 1
            var name = generator.next() % 3 == 0 && length > 16 ? Array(sharedPrefix) : []
            while name.count < length { name.append(alphabet[Int(generator.next() % 3)]) }
            if seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    @Test("sorted exactly as memcmp with shorter prefixes first, every entry once, across reuses", arguments: [1, 2, 63, 64, 65, 1_000])
    func sortsLikeCompareBytes(count: Int) {
        let buffer = ListingBuffer()
        for round in 0..<3 {
            let names = Self.names(count: count, seed: UInt64(count * 10 + round))
            for (index, name) in names.enumerated() {
                buffer.append(SnapshotEntry(name: name, status: FileStatus(device: 1, inode: UInt64(index + 1), mode: 0o100644)))
            }
            let sorted = buffer.takeSorted()
            #expect(buffer.isEmpty)
            let expected = names.sorted { compareBytes($0, $1) < 0 }
            #expect(sorted.map(\.name.bytes) == expected, "round \(round) of \(count) names")
            // Each entry kept its own status: the inode says which name it was made with.
            for entry in sorted {
                #expect(names[Int(entry.status.inode) - 1] == entry.name.bytes)
            }
        }
    }

    @Test("leading words order names as compareBytes does wherever they differ")
    func leadingWords() {
        let names = Self.names(count: 400, seed: 7)
        for first in names.prefix(60) {
            for second in names {
                let (a, b) = (SnapshotName(first).leadingWords, SnapshotName(second).leadingWords)
                let order = compareBytes(first, second)
                if a != b {
                    #expect(((a.high, a.low) < (b.high, b.low)) == (order < 0), "\(first) \(second)")
                } else {
                    #expect(order == 0 || (first.count > 16 && second.count > 16 && first.prefix(16) == second.prefix(16)))
                }
            }
        }
    }
}
