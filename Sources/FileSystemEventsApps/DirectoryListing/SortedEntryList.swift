import FileSystemEventsCore

/// A listing's sorted array and its index by name, changed in batches: each batch becomes one
/// ``DirectoryListingChanges``.
///
/// A batch costs O(k log n) comparisons for k changed names in a list of n entries (binary
/// searches, never a re-sort), plus moving the array's tail for each insertion or removal. A
/// large batch (a burst) is instead merged in one O(n + k log k) pass, so a burst of thousands
/// of files never moves the array thousands of times.
package struct SortedEntryList: Sendable {
    package let order: DirectoryListing.SortOrder
    package private(set) var entries: [DirectoryEntry]
    private var byName: [[UInt8]: DirectoryEntry]

    /// Above this many removals or insertions, a batch rebuilds the array in one pass.
    private static let mergeThreshold = 32

    /// A list of `entries` in any order.
    package init(order: DirectoryListing.SortOrder, unsorted entries: [DirectoryEntry]) {
        self.order = order
        self.entries = entries.sorted(by: order.areInIncreasingOrder)
        self.byName = Dictionary(entries.map { ($0.nameBytes, $0) }, uniquingKeysWith: { $1 })
    }

    /// A list the app already holds (the last one a listing with this order delivered), kept
    /// as is so the offsets of the next change refer to it.
    package init(order: DirectoryListing.SortOrder, sorted entries: [DirectoryEntry]) {
        let isSorted = zip(entries, entries.dropFirst()).allSatisfy { order.compare($0, $1) < 0 }
        self.order = order
        self.entries = isSorted ? entries : entries.sorted(by: order.areInIncreasingOrder)
        self.byName = Dictionary(entries.map { ($0.nameBytes, $0) }, uniquingKeysWith: { $1 })
    }

    package var count: Int { entries.count }

    package func entry(named name: [UInt8]) -> DirectoryEntry? {
        byName[name]
    }

    /// Every name in the list, in no particular order.
    package var names: Dictionary<[UInt8], DirectoryEntry>.Keys { byName.keys }

    /// Sets what the list holds under each name (`nil` removes it) and returns the change as
    /// one update, or `nil` when nothing differs. Names must be unique within a batch.
    package mutating func apply(_ replacements: [(name: [UInt8], entry: DirectoryEntry?)]) -> DirectoryListingChanges? {
        var removals: [(offset: Int, entry: DirectoryEntry)] = []
        var insertions: [DirectoryEntry] = []
        for (name, replacement) in replacements {
            let current = byName[name]
            if current == replacement { continue }
            if let current, let offset = offset(of: current) { removals.append((offset, current)) }
            if let replacement { insertions.append(replacement) }
            byName[name] = replacement
        }
        guard !removals.isEmpty || !insertions.isEmpty else { return nil }
        removals.sort { $0.offset < $1.offset }
        insertions.sort(by: order.areInIncreasingOrder)

        remove(atAscendingOffsets: removals.map(\.offset))
        let insertedOffsets = insert(ascending: insertions)
        return changes(removals: removals, insertions: insertions, insertedOffsets: insertedOffsets)
    }

    /// Empties the list: the last update of a listing whose directory went away.
    package mutating func removeAll() -> DirectoryListingChanges? {
        apply(byName.keys.map { ($0, nil) })
    }

    // MARK: The array

    /// Binary search for an entry that is in the list (the order is total, so it is exact).
    private func offset(of entry: DirectoryEntry) -> Int? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = order.compare(entries[middle], entry)
            if order == 0 { return middle }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Where `entry` belongs: the first offset whose entry sorts after it.
    private func insertionPoint(for entry: DirectoryEntry) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if order.compare(entries[middle], entry) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func remove(atAscendingOffsets offsets: [Int]) {
        guard !offsets.isEmpty else { return }
        if offsets.count <= Self.mergeThreshold {
            for offset in offsets.reversed() { entries.remove(at: offset) }
            return
        }
        var kept: [DirectoryEntry] = []
        kept.reserveCapacity(entries.count - offsets.count)
        var next = 0
        for (offset, entry) in entries.enumerated() {
            if next < offsets.count && offsets[next] == offset {
                next += 1
                continue
            }
            kept.append(entry)
        }
        entries = kept
    }

    /// Inserts sorted `insertions`; returns their offsets in the final array. Inserting in
    /// ascending order means each offset is final when it is taken.
    private mutating func insert(ascending insertions: [DirectoryEntry]) -> [Int] {
        var offsets: [Int] = []
        offsets.reserveCapacity(insertions.count)
        if insertions.count <= Self.mergeThreshold {
            for entry in insertions {
                let offset = insertionPoint(for: entry)
                entries.insert(entry, at: offset)
                offsets.append(offset)
            }
            return offsets
        }
        var merged: [DirectoryEntry] = []
        merged.reserveCapacity(entries.count + insertions.count)
        var index = 0
        for entry in insertions {
            while index < entries.count && order.compare(entries[index], entry) < 0 {
                merged.append(entries[index])
                index += 1
            }
            offsets.append(merged.count)
            merged.append(entry)
        }
        merged.append(contentsOf: entries[index...])
        entries = merged
        return offsets
    }

    // MARK: The change

    /// Pairs removals with insertions of the same item, finds the pairs that stayed in place,
    /// and spells the change both as a `CollectionDifference` and as batch updates.
    private func changes(
        removals: [(offset: Int, entry: DirectoryEntry)],
        insertions: [DirectoryEntry],
        insertedOffsets: [Int]
    ) -> DirectoryListingChanges {
        // The same item: the same name (and type), else the same device, inode, birth time and type.
        var removalPartner = [Int?](repeating: nil, count: removals.count)
        var insertionPartner = [Int?](repeating: nil, count: insertions.count)
        if !removals.isEmpty && !insertions.isEmpty {
            var removalByName: [[UInt8]: Int] = [:]
            for (index, removal) in removals.enumerated() { removalByName[removal.entry.nameBytes] = index }
            for (index, insertion) in insertions.enumerated() {
                if let partner = removalByName[insertion.nameBytes], removals[partner].entry.type == insertion.type {
                    removalPartner[partner] = index
                    insertionPartner[index] = partner
                }
            }
            var unpaired: [DirectoryEntry.Item: [Int]] = [:]
            for index in removals.indices where removalPartner[index] == nil {
                unpaired[removals[index].entry.item, default: []].append(index)
            }
            if !unpaired.isEmpty {
                for (index, insertion) in insertions.enumerated() where insertionPartner[index] == nil {
                    guard var candidates = unpaired[insertion.item], !candidates.isEmpty else { continue }
                    let partner = candidates.removeFirst()
                    unpaired[insertion.item] = candidates
                    removalPartner[partner] = index
                    insertionPartner[index] = partner
                }
            }
        }

        // A pair stayed in place when it sits between the same unchanged neighbours before and
        // after (removals before it in the old list = its rank among removals, likewise for
        // insertions), and keeps its order relative to the other pairs that did: the longest
        // increasing run of new offsets, taken in old order.
        var candidates: [(removal: Int, insertion: Int)] = []
        for (removal, partner) in removalPartner.enumerated() {
            guard let insertion = partner else { continue }
            if removals[removal].offset - removal == insertedOffsets[insertion] - insertion {
                candidates.append((removal, insertion))
            }
        }
        var inPlaceRemovals = Set<Int>()
        var inPlaceInsertions = Set<Int>()
        for chosen in Self.longestIncreasingRun(candidates.map { insertedOffsets[$0.insertion] }) {
            inPlaceRemovals.insert(candidates[chosen].removal)
            inPlaceInsertions.insert(candidates[chosen].insertion)
        }

        var steps: [CollectionDifference<DirectoryEntry>.Change] = []
        steps.reserveCapacity(removals.count + insertions.count)
        var removed: [Int] = []
        var moves: [DirectoryListingChanges.Move] = []
        for (index, removal) in removals.enumerated() {
            let partnerOffset = removalPartner[index].map { insertedOffsets[$0] }
            steps.append(.remove(offset: removal.offset, element: removal.entry, associatedWith: partnerOffset))
            if inPlaceRemovals.contains(index) { continue }
            removed.append(removal.offset)
            if let partnerOffset { moves.append(.init(from: removal.offset, to: partnerOffset)) }
        }
        var inserted: [Int] = []
        var updated: [Int] = []
        for (index, insertion) in insertions.enumerated() {
            let offset = insertedOffsets[index]
            steps.append(.insert(offset: offset, element: insertion, associatedWith: insertionPartner[index].map { removals[$0].offset }))
            if inPlaceInsertions.contains(index) { updated.append(offset) } else { inserted.append(offset) }
        }
        moves.sort { $0.to < $1.to }
        let difference = CollectionDifference(steps) ?? Self.unassociated(steps)
        return DirectoryListingChanges(
            entries: entries, difference: difference, removed: removed, inserted: inserted, updated: updated, moves: moves)
    }

    /// The same steps without associations; only reached if a pairing were inconsistent,
    /// which would be a bug, but then the difference still applies correctly.
    private static func unassociated(_ steps: [CollectionDifference<DirectoryEntry>.Change]) -> CollectionDifference<DirectoryEntry> {
        let plain = steps.map { step -> CollectionDifference<DirectoryEntry>.Change in
            switch step {
            case .remove(let offset, let element, _): return .remove(offset: offset, element: element, associatedWith: nil)
            case .insert(let offset, let element, _): return .insert(offset: offset, element: element, associatedWith: nil)
            }
        }
        return CollectionDifference(plain) ?? [DirectoryEntry]().difference(from: [])
    }

    /// Indices of a longest strictly increasing subsequence of `values` (patience sorting).
    package static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        guard !values.isEmpty else { return [] }
        var tails: [Int] = []  // index into values of the smallest tail of each run length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run: [Int] = []
        var cursor = tails[tails.count - 1]
        while cursor >= 0 {
            run.append(cursor)
            cursor = previous[cursor]
        }
        return run.reversed()
    }
}
