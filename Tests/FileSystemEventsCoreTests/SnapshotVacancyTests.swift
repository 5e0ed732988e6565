import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// Vacancies let a large directory of a snapshot lose and gain many entries without moving the
/// others each time (the diff, and the shared watcher's live tree). They must never be seen:
/// not by a lookup, not in a copy, not in what the diff leaves behind.
@Suite struct SnapshotVacancyTests {
    private static func file(_ number: Int) -> SnapshotEntry {
        SnapshotEntry(name: name(number), status: FileStatus(device: 1, inode: UInt64(number + 100), mode: 0o100644, birthTime: Int64(number + 1)))
    }

    private static func name(_ number: Int) -> [UInt8] {
        let digits = String(number)
        return Array(("f" + String(repeating: "0", count: 6 - digits.count) + digits).utf8)
    }

    private static func directory(_ numbers: some Sequence<Int>) -> SnapshotDirectory {
        let directory = SnapshotDirectory(parent: nil, name: [])
        directory.entries = numbers.sorted { compareBytes(name($0), name($1)) < 0 }.map(file)
        return directory
    }

    @Test("a vacancy is invisible to lookups and is filled by an insertion of its name")
    func vacancyIsInvisible() {
        let directory = Self.directory(0..<10)
        #expect(directory.vacate(named: SnapshotName(Self.name(4))) != nil)
        #expect(directory.vacate(named: SnapshotName(Self.name(4))) == nil)
        #expect(directory.entry(named: Self.name(4)) == nil)
        #expect(directory.remove(named: Self.name(4)) == nil)
        #expect(directory.recursiveCount == 9)
        #expect(directory.vacancies == 1)
        #expect(directory.deepCopy(parent: nil).entries.map(\.name.bytes) == (0..<10).filter { $0 != 4 }.map(Self.name))

        directory.insert(Self.file(4))
        #expect(directory.vacancies == 0)
        #expect(directory.entries.count == 10)
        #expect(directory.entry(named: Self.name(4))?.status.inode == 104)

        directory.vacate(named: SnapshotName(Self.name(7)))
        directory.removeVacancies()
        #expect(directory.entries.map(\.name.bytes) == (0..<10).filter { $0 != 7 }.map(Self.name))
        #expect(directory.vacancies == 0)
    }

    @Test("removals one at a time keep vacancies in proportion to live entries, and lookups right")
    func removalsStayBounded() {
        var generator = SplitMix64(seed: 5)
        var live = Set(0..<2_000)
        let directory = Self.directory(live)
        var order = Array(live)
        for index in order.indices.reversed() {
            order.swapAt(index, Int(generator.next() % UInt64(index + 1)))
        }
        for number in order.prefix(1_900) {
            #expect(directory.removeLeavingVacancy(named: SnapshotName(Self.name(number)))?.status.inode == UInt64(number + 100))
            live.remove(number)
            let vacancies = directory.entries.count - live.count
            #expect(vacancies == Int(directory.vacancies))
            #expect(vacancies <= max(16, directory.entries.count / 2))
        }
        for number in 0..<2_000 {
            #expect((directory.entry(named: Self.name(number)) != nil) == live.contains(number))
        }
        let names = directory.entries.filter { !$0.isVacant }.map(\.name.bytes)
        #expect(names == live.sorted { compareBytes(Self.name($0), Self.name($1)) < 0 }.map(Self.name))
    }

    @Test("the diff of thousands of arrivals and departures in one directory leaves no vacancy and reports each once")
    func diffLeavesNoVacancy() {
        // Even numbers before, odd ones arriving between them; every third even one leaves.
        let before = Array(stride(from: 0, to: 6_000, by: 2))
        let after = before.filter { $0 % 3 != 0 } + Array(stride(from: 1, to: 6_000, by: 2))
        let old = Self.directory(before)
        let new = Self.directory(after)
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: FilePath("/r")))
        let created = Set(events.filter { $0.kind == .created }.map(\.path.string))
        let removed = Set(events.filter { $0.kind == .removed }.map(\.path.string))
        func paths(_ numbers: [Int]) -> Set<String> { Set(numbers.map { "/r/" + String(decoding: Self.name($0), as: UTF8.self) }) }
        #expect(created == paths(Array(stride(from: 1, to: 6_000, by: 2))))
        #expect(removed == paths(before.filter { $0 % 3 == 0 }))
        #expect(events.count == created.count + removed.count)
        #expect(old.vacancies == 0)
        #expect(!old.entries.contains { $0.isVacant })
        #expect(old.entries.map(\.name.bytes) == new.entries.map(\.name.bytes))
    }
}
