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

/// A large directory takes new names in no order without moving its entries for each: they
/// are set aside and merged in a pass now and then. Whatever the mix of insertions, removals,
/// vacancies and in-place changes, every way of looking at the directory agrees with a plain
/// dictionary of what it holds.
@Suite struct SnapshotInsertionTests {
    private static func entry(_ name: [UInt8], inode: UInt64) -> SnapshotEntry {
        SnapshotEntry(name: name, status: FileStatus(device: 1, inode: inode, mode: 0o100644))
    }

    private static func check(_ directory: SnapshotDirectory, _ model: [[UInt8]: UInt64], _ universe: [[UInt8]], _ context: String) {
        for name in universe {
            #expect(directory.entry(named: name)?.status.inode == model[name], "\(context): lookup of \(String(decoding: name, as: UTF8.self))")
        }
        let live = directory.entries.filter { !$0.isVacant }
        #expect(live.map(\.name.bytes) == model.keys.sorted { compareBytes($0, $1) < 0 }, "\(context): entries not the sorted contents")
        #expect(live.map(\.status.inode) == model.keys.sorted { compareBytes($0, $1) < 0 }.map { model[$0]! }, "\(context): entries' contents")
        let all = directory.entries.map(\.name.bytes)
        #expect(zip(all, all.dropFirst()).allSatisfy { compareBytes($0, $1) < 0 }, "\(context): names out of order or repeated")
        #expect(Int(directory.vacancies) == directory.entries.count - live.count, "\(context): vacancy count")
        #expect(directory.recursiveCount == model.count)
        #expect(directory.deepCopy(parent: nil).entries.map(\.name.bytes) == live.map(\.name.bytes))
    }

    @Test("random insertions, replacements, removals and changes agree with a dictionary", arguments: [300, 3_000, 12_000])
    func agreesWithDictionary(universeSize: Int) {
        var random = SplitMix64(seed: UInt64(universeSize))
        let universe = (0..<universeSize).map { _ in Array(String(random.next() % 1_000_000_007, radix: 36).utf8) }
        let directory = SnapshotDirectory(parent: nil, name: [])
        var model: [[UInt8]: UInt64] = [:]
        // Half of it listed in order first, as a scan or a copy fills a directory.
        for name in Set(universe.prefix(universeSize / 2)).sorted(by: { compareBytes($0, $1) < 0 }) {
            directory.insert(Self.entry(name, inode: 1))
            model[name] = 1
        }
        var inode: UInt64 = 2
        for step in 0..<(universeSize * 4) {
            let name = universe[Int(random.next() % UInt64(universeSize))]
            inode += 1
            switch random.next() % 10 {
            case 0..<5:
                directory.insert(Self.entry(name, inode: inode))
                model[name] = inode
            case 5, 6:
                #expect(directory.removeLeavingVacancy(named: SnapshotName(name))?.status.inode == model.removeValue(forKey: name))
            case 7:
                #expect(directory.vacate(named: SnapshotName(name))?.status.inode == model.removeValue(forKey: name))
            case 8:
                let changed = directory.updateEntry(named: SnapshotName(name)) { $0.status.inode = inode }
                #expect(changed == (model[name] != nil))
                if changed { model[name] = inode }
            default:
                // Looking by position merges what was set aside; the index must then hold.
                let (index, found) = directory.position(of: name)
                #expect(found == (directory.entries.indices.contains(index) && directory.entries[index].name.bytes == name))
                if found, !directory.entries[index].isVacant { #expect(directory.entries[index].status.inode == model[name]) }
            }
            if step % universeSize == 0 { Self.check(directory, model, universe, "step \(step)") }
        }
        Self.check(directory, model, universe, "end")
        directory.removeVacancies()
        Self.check(directory, model, universe, "after dropping vacancies")
    }
}
