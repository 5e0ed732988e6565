import FileSystemEventsConformance
import FileSystemEventsCore
import Testing

/// `SnapshotEntry` keeps the part of a status that a tree repeats in the process-wide
/// `FileAttributeTable`. Nothing may be lost on the way: a status must read back exactly as it
/// was stored, whatever its values, from any thread, while other threads store others.
@Suite struct SnapshotEntryTests {
    @Test("an entry is 48 bytes: name or listing, the inode's low half, three times, the size's low half and an attribute index")
    func layout() {
        #expect(MemoryLayout<SnapshotEntry>.stride == 48)
        #expect(MemoryLayout<SnapshotEntryName>.size == 12)
    }

    @Test("a directory's flags and vacancy count, sharing one word, each read back as set")
    func directoryFlags() {
        let directory = SnapshotDirectory(parent: nil, name: Array("d".utf8))
        directory.isUnreadable = true
        directory.noteVacancies(5)
        #expect(directory.isUnreadable && !directory.isDetached && directory.vacancies == 5)
        directory.isDetached = true
        directory.isUnreadable = false
        directory.noteVacancies(Int(UInt32.max))
        #expect(!directory.isUnreadable && directory.isDetached && directory.vacancies == (1 << 30) - 1)
    }

    /// Values at the ends of every field's range, and in between.
    private static func statuses(seed: UInt64, count: Int) -> [FileStatus] {
        var generator = SplitMix64(seed: seed)
        let edges64: [UInt64] = [0, 1, UInt64(UInt32.max), UInt64(UInt32.max) + 1, .max - 1, .max]
        let edges32: [UInt32] = [0, 1, 0o100644, 0o040755, 0o120777, 0o010600, UInt32(UInt16.max), .max - 1]
        let times: [Int64] = [0, 1, -1, .min, .max, 1_764_000_000_123_456_789]
        func pick<T>(_ edges: [T], _ random: T) -> T {
            generator.next() % 3 == 0 ? edges[Int(generator.next() % UInt64(edges.count))] : random
        }
        return (0..<count).map { _ in
            FileStatus(
                device: pick(edges64, generator.next() % 4),
                inode: pick(edges64, generator.next()),
                mode: pick(edges32, UInt32(truncatingIfNeeded: generator.next() % 0o200000)),
                userID: pick(edges32, UInt32(truncatingIfNeeded: generator.next() % 5)),
                groupID: pick(edges32, UInt32(truncatingIfNeeded: generator.next())),
                linkCount: pick(edges32, UInt32(truncatingIfNeeded: generator.next() % 70_000)),
                size: pick(times, Int64(bitPattern: generator.next())),
                modificationTime: pick(times, Int64(bitPattern: generator.next())),
                changeTime: pick(times, Int64(bitPattern: generator.next())),
                birthTime: pick(times, Int64(bitPattern: generator.next()))
            )
        }
    }

    @Test("every status reads back as stored, through the initializer and the setter")
    func roundTrip() {
        let statuses = Self.statuses(seed: 29, count: 5_000)
        var entries = statuses.enumerated().map { SnapshotEntry(name: Array("n\($0.offset)".utf8), status: $0.element) }
        for (entry, status) in zip(entries, statuses) {
            #expect(entry.status == status)
            #expect(entry.itemType == status.itemType)
            #expect(!entry.isVacant)
        }
        // Each entry given its neighbour's status: what the setter stores reads back too.
        for index in entries.indices { entries[index].status = statuses[(index + 1) % statuses.count] }
        for (index, entry) in entries.enumerated() {
            #expect(entry.status == statuses[(index + 1) % statuses.count])
        }
        #expect(SnapshotEntry(vacancyNamed: SnapshotName(Array("v".utf8))).isVacant)
    }

    @Test("a name and a listing read back as stored, however often either is replaced, and copies keep their own")
    func nameAndListing() {
        let names: [[UInt8]] = [Array("f".utf8), Array("eleven-byte".utf8), Array("twelve-bytes".utf8), Array(repeating: 0x61, count: 300)]
        let status = FileStatus(device: 1, inode: 0x1_0000_0002, mode: 0o040755)
        for name in names {
            let listing = SnapshotDirectory(parent: nil, name: name)
            var entry = SnapshotEntry(name: name, status: status)
            #expect(entry.name.bytes == name && entry.directory == nil)
            entry.directory = listing
            let copy = entry
            #expect(entry.name.bytes == name && entry.directory === listing)
            for other in names {
                entry.name = SnapshotName(other)
                #expect(entry.name.bytes == other && entry.directory === listing)
            }
            entry.directory = nil
            #expect(entry.name.bytes == names.last && entry.directory == nil)
            #expect(copy.name.bytes == name && copy.directory === listing)
            #expect(entry.status == status && copy.status == status)
        }
    }

    @Test("statuses stored from many threads at once each read back as stored, on every thread")
    func concurrentStores() async {
        let perTask = 3_000
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    let statuses = Self.statuses(seed: 1_000 + UInt64(task), count: perTask)
                    let entries = statuses.map { SnapshotEntry(name: Array("x".utf8), status: $0) }
                    return zip(entries, statuses).reduce(0) { $0 + ($1.0.status == $1.1 ? 0 : 1) }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }

    @Test("attributes a tree repeats are stored once")
    func repeatedAttributesStoredOnce() {
        let before = FileAttributeTable.count
        let status = FileStatus(device: 0xFEED, inode: 1, mode: 0o100640, userID: 4_242, groupID: 4_243, linkCount: 1)
        var entries: [SnapshotEntry] = []
        for inode in 0..<10_000 {
            var next = status
            next.inode = UInt64(inode)
            next.size = Int64(inode)
            entries.append(SnapshotEntry(name: Array("f\(inode)".utf8), status: next))
        }
        // Other tests may store values meanwhile, but not ten thousand.
        #expect(FileAttributeTable.count - before < 1_000)
        #expect(entries.allSatisfy { $0.status.userID == 4_242 && $0.status.device == 0xFEED })
    }
}
