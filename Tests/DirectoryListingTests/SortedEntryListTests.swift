import FileSystemEventsConformance
@testable import FileSystemEventsApps
import FileSystemEventsCore
import Testing

/// The arithmetic of one update, fuzzed: every batch of random replacements must give a sorted
/// list that the difference reproduces exactly, and that the batch-update recipe (removed,
/// inserted, updated) reproduces too.
struct SortedEntryListTests {
    @Test("random batches: applying(difference) and the batch recipe both give the new list", arguments: [
        DirectoryListing.SortOrder(.name), DirectoryListing.SortOrder(.size), DirectoryListing.SortOrder(.modificationTime, descending: true),
    ])
    func randomBatches(order: DirectoryListing.SortOrder) throws {
        var random = SplitMix64(seed: 0x5eed)
        for round in 0..<300 {
            let initialCount = Int(random.next() % 80)
            var nextInode: UInt64 = 1
            func entry(_ name: String, size: Int64? = nil, inode: UInt64? = nil) -> DirectoryEntry {
                defer { nextInode += 1 }
                return DirectoryEntry(
                    nameBytes: Array(name.utf8), type: .file, size: size ?? Int64(random.next() % 8),
                    modificationTime: .init(secondsSinceEpoch: Int64(random.next() % 5), nanoseconds: 0),
                    identity: FileIdentity(device: 1, inode: inode ?? nextInode))
            }
            var initial: [String: DirectoryEntry] = [:]
            for _ in 0..<initialCount {
                let name = "n\(random.next() % 120)"
                initial[name] = entry(name)
            }
            var list = SortedEntryList(order: order, unsorted: Array(initial.values))
            var model = initial
            for step in 0..<4 {
                // Batches big enough to cross the merge threshold now and then.
                let count = Int(random.next() % (step == 3 ? 90 : 12))
                var batch: [String: DirectoryEntry?] = [:]
                for _ in 0..<count {
                    let name = "n\(random.next() % 120)"
                    switch random.next() % 4 {
                    case 0: batch[name] = .some(nil)
                    case 1: batch[name] = .some(entry(name))
                    case 2:  // a rename: the item of another name moves here
                        let from = "n\(random.next() % 120)"
                        if from != name, batch[from] == nil, let moved = model[from] {
                            batch[from] = .some(nil)
                            batch[name] = .some(entry(name, size: moved.size, inode: moved.identity.inode))
                        }
                    default:  // metadata change in place
                        if let current = model[name] {
                            var changed = current
                            changed.size += Int64(random.next() % 3)
                            batch[name] = .some(changed)
                        }
                    }
                }
                let previous = list.entries
                for (name, value) in batch { model[name] = value }
                let changes = list.apply(batch.map { (Array($0.key.utf8), $0.value) })
                let expected = Array(model.values).sorted(by: order.areInIncreasingOrder)
                #expect(list.entries == expected, "round \(round) step \(step): list is not the sorted model")
                guard let changes else {
                    #expect(previous == expected, "round \(round) step \(step): no changes reported for a change")
                    continue
                }
                #expect(changes.entries == expected)
                #expect(previous.applying(changes.difference) == changes.entries, "round \(round) step \(step): applying(difference)")
                var recipe = previous
                for offset in changes.removed.reversed() { recipe.remove(at: offset) }
                for offset in changes.inserted { recipe.insert(changes.entries[offset], at: offset) }
                for offset in changes.updated { recipe[offset] = changes.entries[offset] }
                #expect(recipe == changes.entries, "round \(round) step \(step): removed/inserted/updated recipe")
                for move in changes.moves {
                    let from = previous[move.from]
                    let to = changes.entries[move.to]
                    #expect(from.nameBytes == to.nameBytes || from.identity == to.identity)
                    #expect(changes.removed.contains(move.from) && changes.inserted.contains(move.to))
                }
            }
        }
    }

    @Test("a rename that keeps its place is an update, one that moves is a move")
    func renamesInPlaceAndMoved() throws {
        func file(_ name: String, _ size: Int64, _ inode: UInt64) -> DirectoryEntry {
            DirectoryEntry(nameBytes: Array(name.utf8), type: .file, size: size,
                           modificationTime: .init(secondsSinceEpoch: 0, nanoseconds: 0), identity: FileIdentity(device: 1, inode: inode))
        }
        var list = SortedEntryList(order: .name, unsorted: [file("a", 1, 1), file("c", 1, 2), file("e", 1, 3)])
        let movedChange = list.apply([(Array("a".utf8), nil), (Array("z".utf8), file("z", 1, 1))])
        let moved = try #require(movedChange)
        #expect(moved.moves == [.init(from: 0, to: 2)])
        #expect(moved.updated.isEmpty)
        let inPlaceChange = list.apply([(Array("c".utf8), nil), (Array("d".utf8), file("d", 1, 2))])
        let inPlace = try #require(inPlaceChange)
        #expect(inPlace.moves.isEmpty)
        #expect(inPlace.updated == [0])
        #expect(inPlace.removed.isEmpty && inPlace.inserted.isEmpty)
        let grownChange = list.apply([(Array("e".utf8), file("e", 9, 3))])
        let grown = try #require(grownChange)
        #expect(grown.updated == [1])
    }

    @Test("the longest increasing run")
    func longestIncreasingRun() {
        #expect(SortedEntryList.longestIncreasingRun([]) == [])
        #expect(SortedEntryList.longestIncreasingRun([3, 1, 2, 5, 4]).map { [3, 1, 2, 5, 4][$0] }.count == 3)
        #expect(SortedEntryList.longestIncreasingRun([1, 2, 3]) == [0, 1, 2])
    }
}

