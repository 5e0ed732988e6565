#if os(Linux)
import Glibc
import FileSystemEventsCore

/// A directory's items by name: what `[[UInt8]: WatchedEntry]` would hold, in a fraction of
/// the memory and with no allocation per name.
///
/// The model holds one of these for every directory of the watched tree, so its cost per item
/// is the watcher's resident memory on a large tree. A dictionary keyed by byte arrays paid for
/// a heap object per name (48 bytes for a 12-byte name) and for buckets sized for a 0.75 load
/// factor, and hashed names element by element. Here:
///
/// - names are stored back to back in one byte arena per directory;
/// - each item is one 16-byte slot (inode, where its name is, type);
/// - the few items that are watched directories of the tree keep their node in a side table
///   by slot number, so files, most of any tree, pay nothing for it;
/// - a directory of more than ``linearLimit`` slots also has an open-addressed index of slot
///   numbers, 16-bit while the table is small enough (nearly always) and 32-bit beyond, hashed
///   with the standard library's seeded `Hasher` (names come from whoever can write to the
///   tree, so the hash must not be predictable); smaller ones, most directories of most trees,
///   are searched in order, which is as fast at that size.
///
/// Removing an item leaves its slot and name bytes behind as garbage, so that no other slot
/// moves; once garbage outweighs what is live, the table is compacted, so a directory that
/// churns through names keeps a size set by what it holds, not by what it has held.
struct ChildTable {
    private struct Slot {
        var inode: UInt64
        /// Where the name starts in ``names``: the low 32 bits, then the next 8 (the arena of
        /// one directory is allowed up to a terabyte of names, not just 4 GiB).
        var nameStartLow: UInt32
        /// A name from `getdents64` or inotify fits: a directory record's length is 16 bits.
        var nameCount: UInt16
        var nameStartHigh: UInt8
        /// The type's ``typeCodes`` index, plus ``hasDirectoryFlag`` when ``directories``
        /// holds the item's node; ``removedState`` for a removed item's slot.
        var state: UInt8

        var nameStart: Int { Int(nameStartLow) | Int(nameStartHigh) << 32 }
        var isLive: Bool { state != ChildTable.removedState }
        var hasDirectory: Bool { state & ChildTable.hasDirectoryFlag != 0 }
        var type: FileItemType { ChildTable.typeCodes[Int(state & ~ChildTable.hasDirectoryFlag)] }
    }

    /// Up to this many slots, a lookup compares names in order and keeps no index.
    static var linearLimit: Int { 16 }
    private static var removedState: UInt8 { 0xFF }
    private static var hasDirectoryFlag: UInt8 { 0x80 }
    private static let typeCodes: [FileItemType] = [.file, .directory, .symlink, .other, .unknown]

    private static func state(of entry: WatchedEntry) -> UInt8 {
        let code: UInt8
        switch entry.type {
        case .file: code = 0
        case .directory: code = 1
        case .symlink: code = 2
        case .other: code = 3
        case .unknown: code = 4
        }
        return entry.directory == nil ? code : code | hasDirectoryFlag
    }

    private var names: [UInt8] = []
    private var slots: [Slot] = []
    /// The watched directories among the items, by slot number.
    private var directories: [UInt32: WatchedDirectory] = [:]

    /// Whether any item is a directory of the recursive tree (with a node of its own).
    var hasDirectories: Bool { !directories.isEmpty }
    /// Slot number + 1 at each position, 0 where empty, the type's maximum where removed. One
    /// of the two is in use, and neither while the table has no more than ``linearLimit``
    /// slots: the narrow one while the index has at most 65,536 positions (the load limit
    /// keeps slot numbers below 49,152 then), the wide one beyond.
    private var narrowIndex: [UInt16] = []
    private var wideIndex: [UInt32] = []
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
        if count > Self.linearLimit && indexSize < Self.indexSize(for: count) { rebuildIndex(size: Self.indexSize(for: count)) }
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
        find(key).map { entry(at: $0) }
    }

    /// Sets the item at the name `key`, given as bytes (a crawl's listing buffer).
    mutating func update(_ key: UnsafeRawBufferPointer, to entry: WatchedEntry) {
        if let found = find(key) {
            if slots[found].hasDirectory, let replaced = directories[UInt32(found)], replaced !== entry.directory {
                WatchedDirectory.detached(replaced)
            }
            slots[found].inode = entry.inode
            slots[found].state = Self.state(of: entry)
            directories[UInt32(found)] = entry.directory
            return
        }
        let start = names.count
        names.append(contentsOf: key)
        slots.append(Slot(inode: entry.inode, nameStartLow: UInt32(truncatingIfNeeded: start),
                          nameCount: UInt16(truncatingIfNeeded: key.count), nameStartHigh: UInt8(truncatingIfNeeded: start >> 32),
                          state: Self.state(of: entry)))
        if let directory = entry.directory { directories[UInt32(slots.count - 1)] = directory }
        count += 1
        if indexSize > 0 || slots.count > Self.linearLimit {
            if slots.count * 4 > indexSize * 3 {
                // Doubled, so that a directory filled one event at a time rebuilds its index
                // a logarithmic number of times.
                rebuildIndex(size: Self.indexSize(for: slots.count * 2))
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

    private func entry(at slot: Int) -> WatchedEntry {
        let stored = slots[slot]
        return WatchedEntry(type: stored.type, inode: stored.inode, directory: stored.hasDirectory ? directories[UInt32(slot)] : nil)
    }

    /// Index positions for `slotCount` slots at a load of at most 3/4: that many exactly, not
    /// the next power of two, which gave a directory of 100 files 256 positions (512 bytes, a
    /// fifth of what its items cost) and a tree of 1M files in 10,000 such directories 2.4 MB
    /// more than it needs. ``position(of:in:)`` maps a hash onto any size.
    private static func indexSize(for slotCount: Int) -> Int {
        Swift.max(16, (slotCount * 4 + 4) / 3 + 1)
    }

    /// Where probing for `hash` starts in an index of `size` positions: the high word of
    /// their product, which spreads the hash over the whole range (Lemire's multiply-shift)
    /// where a mask would need a power-of-two size.
    @inline(__always)
    private static func position(of hash: Int, in size: Int) -> Int {
        Int(truncatingIfNeeded: UInt(bitPattern: hash).multipliedFullWidth(by: UInt(size)).high)
    }

    private var indexSize: Int { wideIndex.isEmpty ? narrowIndex.count : wideIndex.count }

    /// Positions of the index, 0 while there is none (what a test checks the index's size by).
    var indexPositions: Int { indexSize }

    /// What the index holds at `position`: a slot number, or `nil` where empty (`isEnd`) or
    /// removed.
    @inline(__always)
    private func indexEntry(at position: Int) -> (slot: Int?, isEnd: Bool) {
        if wideIndex.isEmpty {
            let raw = narrowIndex[position]
            return raw == 0 ? (nil, true) : raw == .max ? (nil, false) : (Int(raw) - 1, false)
        }
        let raw = wideIndex[position]
        return raw == 0 ? (nil, true) : raw == .max ? (nil, false) : (Int(raw) - 1, false)
    }

    @inline(__always)
    private mutating func setIndexEntry(at position: Int, slot: Int?) {
        if wideIndex.isEmpty {
            narrowIndex[position] = slot.map { UInt16(truncatingIfNeeded: $0 + 1) } ?? .max
        } else {
            wideIndex[position] = slot.map { UInt32(truncatingIfNeeded: $0 + 1) } ?? .max
        }
    }

    private static func hash(_ key: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        return hasher.finalize()
    }

    private func nameMatches(_ slot: Slot, _ key: UnsafeRawBufferPointer) -> Bool {
        guard Int(slot.nameCount) == key.count, slot.isLive else { return false }
        if key.isEmpty { return true }
        return names.withUnsafeBytes { arena in
            memcmp(arena.baseAddress! + slot.nameStart, key.baseAddress!, key.count) == 0
        }
    }

    private func find(_ key: UnsafeRawBufferPointer) -> Int? {
        let size = indexSize
        if size == 0 {
            return slots.firstIndex { nameMatches($0, key) }
        }
        var position = Self.position(of: Self.hash(key), in: size)
        while true {
            let (slot, isEnd) = indexEntry(at: position)
            if isEnd { return nil }
            if let slot, nameMatches(slots[slot], key) { return slot }
            position += 1
            if position == size { position = 0 }
        }
    }

    private mutating func remove(_ key: UnsafeRawBufferPointer) -> WatchedEntry? {
        guard let found = find(key) else { return nil }
        let entry = entry(at: found)
        let size = indexSize
        if size > 0 {
            var position = Self.position(of: Self.hash(key), in: size)
            while indexEntry(at: position).slot != found {
                position += 1
                if position == size { position = 0 }
            }
            setIndexEntry(at: position, slot: nil)
        }
        if slots[found].hasDirectory, let removed = directories.removeValue(forKey: UInt32(found)) {
            WatchedDirectory.detached(removed)
        }
        slots[found].state = Self.removedState
        count -= 1
        let garbage = slots.count - count
        if garbage > Self.linearLimit && garbage > count { compact() }
        return entry
    }

    private mutating func insertIntoIndex(slot: Int, hash: Int) {
        let size = indexSize
        var position = Self.position(of: hash, in: size)
        while true {
            let (occupant, isEnd) = indexEntry(at: position)
            if isEnd || occupant == nil { break }
            position += 1
            if position == size { position = 0 }
        }
        setIndexEntry(at: position, slot: slot)
    }

    private mutating func rebuildIndex(size: Int) {
        if size <= 1 << 16 {
            narrowIndex = Array(repeating: 0, count: size)
            wideIndex = []
        } else {
            narrowIndex = []
            wideIndex = Array(repeating: 0, count: size)
        }
        for slot in slots.indices where slots[slot].isLive {
            let start = slots[slot].nameStart
            let hash = names.withUnsafeBytes { Self.hash(UnsafeRawBufferPointer(rebasing: $0[start..<start + Int(slots[slot].nameCount)])) }
            insertIntoIndex(slot: slot, hash: hash)
        }
    }

    /// Drops removed slots and their names; live items keep their order.
    private mutating func compact() {
        var liveNames: [UInt8] = []
        var liveSlots: [Slot] = []
        var liveDirectories: [UInt32: WatchedDirectory] = [:]
        var liveNameBytes = 0
        for slot in slots where slot.isLive { liveNameBytes += Int(slot.nameCount) }
        liveNames.reserveCapacity(liveNameBytes)
        liveSlots.reserveCapacity(count)
        liveDirectories.reserveCapacity(directories.count)
        for (number, var slot) in slots.enumerated() where slot.isLive {
            let start = slot.nameStart
            let newStart = liveNames.count
            liveNames.append(contentsOf: names[start..<start + Int(slot.nameCount)])
            slot.nameStartLow = UInt32(truncatingIfNeeded: newStart)
            slot.nameStartHigh = UInt8(truncatingIfNeeded: newStart >> 32)
            if slot.hasDirectory { liveDirectories[UInt32(liveSlots.count)] = directories[UInt32(number)] }
            liveSlots.append(slot)
        }
        names = liveNames
        slots = liveSlots
        directories = liveDirectories
        if slots.count > Self.linearLimit {
            rebuildIndex(size: Self.indexSize(for: slots.count))
        } else {
            narrowIndex = []
            wideIndex = []
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
                guard slot.isLive else { continue }
                let start = slot.nameStart
                return (table.names[start..<start + Int(slot.nameCount)], table.entry(at: position - 1))
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(table: self) }

    var underestimatedCount: Int { count }
}
#endif
