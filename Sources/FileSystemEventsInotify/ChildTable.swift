#if os(Linux)
import Glibc
import FileSystemEventsCore

/// A directory's items by name: what `[[UInt8]: WatchedEntry]` would hold, in about half
/// the memory and with no allocation per name.
///
/// The model holds one of these for every directory of the watched tree, so its cost per item
/// is the watcher's resident memory on a large tree. A dictionary keyed by byte arrays paid for
/// a heap object per name (48 bytes for a 12-byte name) and for buckets sized for a 0.75 load
/// factor, and hashed names element by element. Here:
///
/// - names are stored back to back in one byte arena per directory;
/// - each item is one 24-byte slot (inode, child directory, where its name is, type);
/// - a directory of more than ``linearLimit`` slots also has an open-addressed index of 32-bit
///   slot numbers, hashed with the standard library's seeded `Hasher` (names come from whoever
///   can write to the tree, so the hash must not be predictable); smaller ones, most
///   directories of most trees, are searched in order, which is as fast at that size.
///
/// Removing an item leaves its slot and name bytes behind as garbage, so that no other slot
/// moves; once garbage outweighs what is live, the table is compacted, so a directory that
/// churns through names keeps a size set by what it holds, not by what it has held.
struct ChildTable {
    private struct Slot {
        var inode: UInt64
        var directory: WatchedDirectory?
        /// Where the name starts in ``names``: the low 32 bits, then the next 8 (the arena of
        /// one directory is allowed up to a terabyte of names, not just 4 GiB).
        var nameStartLow: UInt32
        var nameStartHigh: UInt8
        /// `nil` for a removed item's slot.
        var type: FileItemType?
        /// A name from `getdents64` or inotify fits: a directory record's length is 16 bits.
        var nameCount: UInt16

        var nameStart: Int { Int(nameStartLow) | Int(nameStartHigh) << 32 }
        var entry: WatchedEntry { WatchedEntry(type: type ?? .unknown, inode: inode, directory: directory) }
    }

    /// Up to this many slots, a lookup compares names in order and keeps no index.
    static var linearLimit: Int { 16 }
    private static var emptyIndexEntry: UInt32 { 0 }
    private static var removedIndexEntry: UInt32 { .max }

    private var names: [UInt8] = []
    private var slots: [Slot] = []
    /// Slot number + 1 at each position; ``emptyIndexEntry`` or ``removedIndexEntry`` otherwise.
    /// Empty while the table has no more than ``linearLimit`` slots.
    private var index: [UInt32] = []
    /// Live items.
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Slots held, live or removed: what compaction keeps in proportion to ``count``.
    var retainedSlots: Int { slots.count }

    /// Makes room for `count` items with `nameBytes` bytes of names in all, at that size
    /// exactly: a crawl knows both before it fills a directory's table.
    mutating func reserveCapacity(_ count: Int, nameBytes: Int = 0) {
        slots.reserveCapacity(count)
        if nameBytes > 0 { names.reserveCapacity(nameBytes) }
        if count > Self.linearLimit && index.count < Self.indexSize(for: count) { rebuildIndex(size: Self.indexSize(for: count)) }
    }

    subscript(name: [UInt8]) -> WatchedEntry? {
        get {
            name.withUnsafeBytes { entry(named: $0) }
        }
        set {
            name.withUnsafeBytes { key in
                if let newValue { update(key, to: newValue) } else { _ = remove(key) }
            }
        }
    }

    /// The item at the name `key`, given as bytes (a crawl's listing buffer).
    func entry(named key: UnsafeRawBufferPointer) -> WatchedEntry? {
        find(key).map { slots[$0].entry }
    }

    /// Sets the item at the name `key`, given as bytes (a crawl's listing buffer).
    mutating func update(_ key: UnsafeRawBufferPointer, to entry: WatchedEntry) {
        if let found = find(key) {
            slots[found].inode = entry.inode
            slots[found].type = entry.type
            slots[found].directory = entry.directory
            return
        }
        let start = names.count
        names.append(contentsOf: key)
        slots.append(Slot(inode: entry.inode, directory: entry.directory,
                          nameStartLow: UInt32(truncatingIfNeeded: start), nameStartHigh: UInt8(truncatingIfNeeded: start >> 32),
                          type: entry.type, nameCount: UInt16(truncatingIfNeeded: key.count)))
        count += 1
        if !index.isEmpty || slots.count > Self.linearLimit {
            if slots.count * 4 > index.count * 3 {
                rebuildIndex(size: Self.indexSize(for: slots.count))
            } else {
                insertIntoIndex(slot: slots.count - 1, hash: Self.hash(key))
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey name: [UInt8]) -> WatchedEntry? {
        name.withUnsafeBytes { remove($0) }
    }

    /// Every item's name, as separate arrays (for the rare walks that keep names).
    var keys: [[UInt8]] { map { Array($0.name) } }

    /// Every item, without its name.
    var values: LazyMapSequence<ChildTable, WatchedEntry> { lazy.map { $0.entry } }

    // MARK: Storage

    private static func indexSize(for slotCount: Int) -> Int {
        var size = 16
        while size * 3 < slotCount * 4 + 4 { size <<= 1 }
        return size
    }

    private static func hash(_ key: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        return hasher.finalize()
    }

    private func nameMatches(_ slot: Slot, _ key: UnsafeRawBufferPointer) -> Bool {
        guard Int(slot.nameCount) == key.count, slot.type != nil else { return false }
        if key.isEmpty { return true }
        return names.withUnsafeBytes { arena in
            memcmp(arena.baseAddress! + slot.nameStart, key.baseAddress!, key.count) == 0
        }
    }

    private func find(_ key: UnsafeRawBufferPointer) -> Int? {
        if index.isEmpty {
            return slots.firstIndex { nameMatches($0, key) }
        }
        let mask = index.count - 1
        var position = Self.hash(key) & mask
        while true {
            let entry = index[position]
            if entry == Self.emptyIndexEntry { return nil }
            if entry != Self.removedIndexEntry {
                let slot = Int(entry) - 1
                if nameMatches(slots[slot], key) { return slot }
            }
            position = (position + 1) & mask
        }
    }

    private mutating func remove(_ key: UnsafeRawBufferPointer) -> WatchedEntry? {
        guard let found = find(key) else { return nil }
        let entry = slots[found].entry
        if !index.isEmpty {
            let mask = index.count - 1
            var position = Self.hash(key) & mask
            while index[position] != UInt32(found + 1) { position = (position + 1) & mask }
            index[position] = Self.removedIndexEntry
        }
        slots[found].type = nil
        slots[found].directory = nil
        count -= 1
        let garbage = slots.count - count
        if garbage > Self.linearLimit && garbage > count { compact() }
        return entry
    }

    private mutating func insertIntoIndex(slot: Int, hash: Int) {
        let mask = index.count - 1
        var position = hash & mask
        while index[position] != Self.emptyIndexEntry && index[position] != Self.removedIndexEntry {
            position = (position + 1) & mask
        }
        index[position] = UInt32(slot + 1)
    }

    private mutating func rebuildIndex(size: Int) {
        index = Array(repeating: Self.emptyIndexEntry, count: size)
        for slot in slots.indices where slots[slot].type != nil {
            let start = slots[slot].nameStart
            let hash = names.withUnsafeBytes { Self.hash(UnsafeRawBufferPointer(rebasing: $0[start..<start + Int(slots[slot].nameCount)])) }
            insertIntoIndex(slot: slot, hash: hash)
        }
    }

    /// Drops removed slots and their names; live items keep their order.
    private mutating func compact() {
        var liveNames: [UInt8] = []
        var liveSlots: [Slot] = []
        var liveNameBytes = 0
        for slot in slots where slot.type != nil { liveNameBytes += Int(slot.nameCount) }
        liveNames.reserveCapacity(liveNameBytes)
        liveSlots.reserveCapacity(count)
        for var slot in slots where slot.type != nil {
            let start = slot.nameStart
            let newStart = liveNames.count
            liveNames.append(contentsOf: names[start..<start + Int(slot.nameCount)])
            slot.nameStartLow = UInt32(truncatingIfNeeded: newStart)
            slot.nameStartHigh = UInt8(truncatingIfNeeded: newStart >> 32)
            liveSlots.append(slot)
        }
        names = liveNames
        slots = liveSlots
        if slots.count > Self.linearLimit {
            rebuildIndex(size: Self.indexSize(for: slots.count))
        } else {
            index = []
        }
    }
}

extension ChildTable: Sequence {
    /// An item and its name, a view into the table's arena (no copy).
    typealias Element = (name: ArraySlice<UInt8>, entry: WatchedEntry)

    struct Iterator: IteratorProtocol {
        fileprivate let table: ChildTable
        fileprivate var position = 0

        mutating func next() -> Element? {
            while position < table.slots.count {
                let slot = table.slots[position]
                position += 1
                guard slot.type != nil else { continue }
                let start = slot.nameStart
                return (table.names[start..<start + Int(slot.nameCount)], slot.entry)
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(table: self) }

    var underestimatedCount: Int { count }
}
#endif
