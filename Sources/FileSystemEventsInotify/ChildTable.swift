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
/// - each item is one record in a single byte array per directory: its type, its inode, its
///   name's length, then the name itself, each field as narrow as its value allows, so 6 bytes
///   plus the name for an inode number below 2^32 and a name shorter than 256 bytes (nearly
///   every item). Fixed 16-byte slots with the names in an arena of their own took two heap
///   blocks per directory and 10 bytes more per item: a heap profile of the 110k-entry
///   start-up tree (10,101 directories of 10 files) put 2.6 MB, half of the watcher's heap, in
///   those two arrays;
/// - an item is known by where its record starts, its *offset*, which no insertion or removal
///   moves (only compaction, which renumbers everything at once);
/// - the few items that are watched directories of the tree keep their node in a side table
///   by offset, so files, most of any tree, pay nothing for it;
/// - a directory of more than ``linearLimit`` records also has an open-addressed index of
///   offsets, 2 bytes a position while the records fit in 64 KiB (nearly always), 4 or 8
///   beyond, hashed with the standard library's seeded `Hasher` (names come from whoever can
///   write to the tree, so the hash must not be predictable); smaller ones, most directories of
///   most trees, are searched in order, which is as fast at that size.
///
/// Removing an item leaves its record behind as garbage, so that no other record moves; once
/// garbage outweighs what is live, the table is compacted, so a directory that churns through
/// names keeps a size set by what it holds, not by what it has held.
struct ChildTable {
    // A record, from its offset: the state (1 byte), the inode (4 bytes, or 8 with
    // ``wideInodeFlag``), the name's length (1 byte, or 2 with ``wideNameFlag``: a name from
    // `getdents64` or inotify fits, a directory record's length is 16 bits), the name. Loads
    // are unaligned.
    /// A record's size before its name, for the usual item (what a crawl reserves room by).
    private static var narrowHeaderSize: Int { 6 }

    /// Up to this many records, a lookup compares names in order and keeps no index.
    static var linearLimit: Int { 16 }
    /// The state byte: the type's ``typeCodes`` index in the low 3 bits, plus
    /// ``hasDirectoryFlag`` when ``directories`` holds the item's node, ``removedFlag`` once the
    /// item is removed, and the flags of the wide fields (which a removed record keeps, so that
    /// a walk can still step over it).
    private static var typeMask: UInt8 { 0x07 }
    private static var removedFlag: UInt8 { 0x08 }
    private static var wideNameFlag: UInt8 { 0x20 }
    private static var wideInodeFlag: UInt8 { 0x40 }
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

    private static func fitsNarrowInode(_ inode: UInt64) -> Bool { inode <= UInt64(UInt32.max) }

    private var records: [UInt8] = []
    /// Records held, live or removed.
    private var recordCount = 0
    /// The watched directories among the items, by offset.
    private var directories: [Int: WatchedDirectory] = [:]
    /// Offset + 1 at each position, 0 where empty, the width's maximum where removed; empty
    /// while the table has no more than ``linearLimit`` records. ``indexWidth`` bytes a position:
    /// the narrowest that holds every offset the records can have.
    private var index: [UInt8] = []
    /// Live items.
    private(set) var count = 0
    /// Last, and one byte: the node that holds the table packs its small fields into the
    /// table's tail (``WatchedDirectory``).
    private var indexWidth: UInt8 = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Whether any item is a directory of the recursive tree (with a node of its own).
    var hasDirectories: Bool { !directories.isEmpty }

    /// Records held, live or removed: what compaction keeps in proportion to ``count``.
    var retainedSlots: Int { recordCount }

    /// Makes room for `count` items with `nameBytes` bytes of names in all, at that size
    /// exactly: a crawl knows both before it fills a directory's table.
    mutating func reserveCapacity(_ count: Int, nameBytes: Int = 0) {
        let bytes = count * Self.narrowHeaderSize + nameBytes
        records.reserveCapacity(bytes)
        if count > Self.linearLimit && indexPositions < Self.indexSize(for: count) {
            rebuildIndex(positions: Self.indexSize(for: count), recordBytes: bytes)
        }
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
            let state = state(at: found)
            if state & Self.hasDirectoryFlag != 0, let replaced = directories[found], replaced !== entry.directory {
                WatchedDirectory.detached(replaced)
            }
            if state & Self.wideInodeFlag != 0 || Self.fitsNarrowInode(entry.inode) {
                let wideFlags = state & (Self.wideInodeFlag | Self.wideNameFlag)
                records.withUnsafeMutableBytes { bytes in
                    if wideFlags & Self.wideInodeFlag != 0 {
                        bytes.storeBytes(of: entry.inode, toByteOffset: found + 1, as: UInt64.self)
                    } else {
                        bytes.storeBytes(of: UInt32(truncatingIfNeeded: entry.inode), toByteOffset: found + 1, as: UInt32.self)
                    }
                    bytes[found] = Self.state(of: entry) | wideFlags
                }
                directories[found] = entry.directory
                return
            }
            // An inode number that no longer fits the record's field: the item moves to a
            // record of its own at the end (its old node, if kept, was not detached).
            removeRecord(at: found, key: key)
        }
        let offset = records.count
        var state = Self.state(of: entry)
        let wideInode = !Self.fitsNarrowInode(entry.inode), wideName = key.count > Int(UInt8.max)
        if wideInode { state |= Self.wideInodeFlag }
        if wideName { state |= Self.wideNameFlag }
        records.append(state)
        if wideInode {
            withUnsafeBytes(of: entry.inode) { records.append(contentsOf: $0) }
        } else {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: entry.inode)) { records.append(contentsOf: $0) }
        }
        if wideName {
            withUnsafeBytes(of: UInt16(truncatingIfNeeded: key.count)) { records.append(contentsOf: $0) }
        } else {
            records.append(UInt8(truncatingIfNeeded: key.count))
        }
        records.append(contentsOf: key)
        if let directory = entry.directory { directories[offset] = directory }
        count += 1
        recordCount += 1
        if indexWidth > 0 || recordCount > Self.linearLimit {
            let positions = indexPositions
            if recordCount * 4 > positions * 3 {
                // Doubled, so that a directory filled one event at a time rebuilds its index
                // a logarithmic number of times.
                rebuildIndex(positions: Self.indexSize(for: recordCount * 2), recordBytes: records.count)
            } else if Self.indexWidth(forRecordBytes: records.count) > Int(indexWidth) {
                rebuildIndex(positions: positions, recordBytes: records.count)
            } else {
                insertIntoIndex(offset: offset, hash: Self.hash(key))
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

    // MARK: Records

    @inline(__always)
    private func state(at offset: Int) -> UInt8 { records[offset] }

    @inline(__always)
    private static func isLive(_ state: UInt8) -> Bool { state & removedFlag == 0 }

    /// Where the name of the record at `offset` is, in `bytes` (the records).
    @inline(__always)
    private static func name(at offset: Int, in bytes: UnsafeRawBufferPointer) -> Range<Int> {
        let state = bytes[offset]
        let lengthField = offset + (state & wideInodeFlag != 0 ? 9 : 5)
        if state & wideNameFlag != 0 {
            let count = Int(bytes.loadUnaligned(fromByteOffset: lengthField, as: UInt16.self))
            return lengthField + 2..<lengthField + 2 + count
        }
        let count = Int(bytes[lengthField])
        return lengthField + 1..<lengthField + 1 + count
    }

    @inline(__always)
    private func name(at offset: Int) -> Range<Int> { records.withUnsafeBytes { Self.name(at: offset, in: $0) } }

    /// Where the record after the one at `offset` starts.
    @inline(__always)
    private func end(of offset: Int) -> Int { name(at: offset).upperBound }

    private func entry(at offset: Int) -> WatchedEntry {
        let (state, inode) = records.withUnsafeBytes { bytes in
            let state = bytes[offset]
            let inode = state & Self.wideInodeFlag != 0
                ? bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self)
                : UInt64(bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self))
            return (state, inode)
        }
        return WatchedEntry(type: Self.typeCodes[Int(state & Self.typeMask)], inode: inode,
                            directory: state & Self.hasDirectoryFlag != 0 ? directories[offset] : nil)
    }

    // MARK: Index

    /// Index positions for `recordCount` records at a load of at most 3/4: that many exactly,
    /// not the next power of two, which gave a directory of 100 files 256 positions (512 bytes,
    /// a fifth of what its items cost) and a tree of 1M files in 10,000 such directories 2.4 MB
    /// more than it needs. ``position(of:in:)`` maps a hash onto any size.
    private static func indexSize(for recordCount: Int) -> Int {
        Swift.max(16, (recordCount * 4 + 4) / 3 + 1)
    }

    /// Bytes a position needs to hold offset + 1 for records of `recordBytes` bytes in all,
    /// with the width's maximum left for a removed item.
    private static func indexWidth(forRecordBytes recordBytes: Int) -> Int {
        recordBytes < Int(UInt16.max) - 1 ? 2 : recordBytes < Int(UInt32.max) - 1 ? 4 : 8
    }

    /// Where probing for `hash` starts in an index of `size` positions: the high word of
    /// their product, which spreads the hash over the whole range (Lemire's multiply-shift)
    /// where a mask would need a power-of-two size.
    @inline(__always)
    private static func position(of hash: Int, in size: Int) -> Int {
        Int(truncatingIfNeeded: UInt(bitPattern: hash).multipliedFullWidth(by: UInt(size)).high)
    }

    /// Positions of the index, 0 while there is none (what a test checks the index's size by).
    var indexPositions: Int { indexWidth == 0 ? 0 : index.count / Int(indexWidth) }

    /// What the index holds at `position`: an offset, or `nil` where empty (`isEnd`) or removed.
    @inline(__always)
    private func indexEntry(at position: Int) -> (offset: Int?, isEnd: Bool) {
        index.withUnsafeBytes { bytes in
            let raw: UInt64, removed: UInt64
            switch indexWidth {
            case 2:
                raw = UInt64(bytes.loadUnaligned(fromByteOffset: position * 2, as: UInt16.self))
                removed = UInt64(UInt16.max)
            case 4:
                raw = UInt64(bytes.loadUnaligned(fromByteOffset: position * 4, as: UInt32.self))
                removed = UInt64(UInt32.max)
            default:
                raw = bytes.loadUnaligned(fromByteOffset: position * 8, as: UInt64.self)
                removed = UInt64.max
            }
            return raw == 0 ? (nil, true) : raw == removed ? (nil, false) : (Int(truncatingIfNeeded: raw - 1), false)
        }
    }

    @inline(__always)
    private mutating func setIndexEntry(at position: Int, offset: Int?) {
        let width = indexWidth
        index.withUnsafeMutableBytes { bytes in
            let raw = offset.map { UInt64(truncatingIfNeeded: $0 + 1) } ?? .max
            switch width {
            case 2: bytes.storeBytes(of: UInt16(truncatingIfNeeded: raw), toByteOffset: position * 2, as: UInt16.self)
            case 4: bytes.storeBytes(of: UInt32(truncatingIfNeeded: raw), toByteOffset: position * 4, as: UInt32.self)
            default: bytes.storeBytes(of: raw, toByteOffset: position * 8, as: UInt64.self)
            }
        }
    }

    private static func hash(_ key: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        return hasher.finalize()
    }

    private func nameMatches(_ offset: Int, _ key: UnsafeRawBufferPointer) -> Bool {
        records.withUnsafeBytes { bytes in
            let name = Self.name(at: offset, in: bytes)
            guard name.count == key.count, Self.isLive(bytes[offset]) else { return false }
            if key.isEmpty { return true }
            return memcmp(bytes.baseAddress! + name.lowerBound, key.baseAddress!, key.count) == 0
        }
    }

    private func find(_ key: UnsafeRawBufferPointer) -> Int? {
        let size = indexPositions
        if size == 0 {
            var offset = 0
            while offset < records.count {
                if nameMatches(offset, key) { return offset }
                offset = end(of: offset)
            }
            return nil
        }
        var position = Self.position(of: Self.hash(key), in: size)
        while true {
            let (offset, isEnd) = indexEntry(at: position)
            if isEnd { return nil }
            if let offset, nameMatches(offset, key) { return offset }
            position += 1
            if position == size { position = 0 }
        }
    }

    private mutating func remove(_ key: UnsafeRawBufferPointer) -> WatchedEntry? {
        guard let found = find(key) else { return nil }
        let entry = entry(at: found)
        if entry.directory != nil, let removed = directories[found] { WatchedDirectory.detached(removed) }
        removeRecord(at: found, key: key)
        return entry
    }

    /// Removes the item whose record is at `found`, named `key`; its node, if any, is only
    /// dropped from ``directories``.
    private mutating func removeRecord(at found: Int, key: UnsafeRawBufferPointer) {
        let size = indexPositions
        if size > 0 {
            var position = Self.position(of: Self.hash(key), in: size)
            while indexEntry(at: position).offset != found {
                position += 1
                if position == size { position = 0 }
            }
            setIndexEntry(at: position, offset: nil)
        }
        directories[found] = nil
        records[found] = (records[found] & ~Self.hasDirectoryFlag) | Self.removedFlag
        count -= 1
        let garbage = recordCount - count
        if garbage > Self.linearLimit && garbage > count { compact() }
    }

    private mutating func insertIntoIndex(offset: Int, hash: Int) {
        let size = indexPositions
        var position = Self.position(of: hash, in: size)
        while true {
            let (occupant, isEnd) = indexEntry(at: position)
            if isEnd || occupant == nil { break }
            position += 1
            if position == size { position = 0 }
        }
        setIndexEntry(at: position, offset: offset)
    }

    /// An index of `positions` positions, wide enough for offsets into `recordBytes` bytes of
    /// records (more than are held when a crawl reserves room first).
    private mutating func rebuildIndex(positions: Int, recordBytes: Int) {
        let width = Self.indexWidth(forRecordBytes: Swift.max(recordBytes, records.count))
        indexWidth = UInt8(truncatingIfNeeded: width)
        index = Array(repeating: 0, count: positions * width)
        var offset = 0
        while offset < records.count {
            let next = end(of: offset)
            if Self.isLive(state(at: offset)) {
                let nameRange = name(at: offset)
                let hash = records.withUnsafeBytes { Self.hash(UnsafeRawBufferPointer(rebasing: $0[nameRange])) }
                insertIntoIndex(offset: offset, hash: hash)
            }
            offset = next
        }
    }

    /// Drops removed records; live items keep their order.
    private mutating func compact() {
        var liveBytes = 0
        var offset = 0
        while offset < records.count {
            let next = end(of: offset)
            if Self.isLive(state(at: offset)) { liveBytes += next - offset }
            offset = next
        }
        var live: [UInt8] = []
        live.reserveCapacity(liveBytes)
        var liveDirectories: [Int: WatchedDirectory] = [:]
        liveDirectories.reserveCapacity(directories.count)
        offset = 0
        while offset < records.count {
            let next = end(of: offset)
            let state = state(at: offset)
            if Self.isLive(state) {
                if state & Self.hasDirectoryFlag != 0 { liveDirectories[live.count] = directories[offset] }
                live.append(contentsOf: records[offset..<next])
            }
            offset = next
        }
        records = live
        recordCount = count
        directories = liveDirectories
        if recordCount > Self.linearLimit {
            rebuildIndex(positions: Self.indexSize(for: recordCount), recordBytes: records.count)
        } else {
            index = []
            indexWidth = 0
        }
    }
}

extension ChildTable: Sequence {
    /// An item and its name, a view into the table's records (no copy).
    typealias Element = (name: ArraySlice<UInt8>, entry: WatchedEntry)

    struct Iterator: IteratorProtocol {
        fileprivate let table: ChildTable
        fileprivate var offset = 0

        mutating func next() -> Element? {
            while offset < table.records.count {
                let current = offset
                let name = table.name(at: current)
                offset = name.upperBound
                guard ChildTable.isLive(table.state(at: current)) else { continue }
                return (table.records[name], table.entry(at: current))
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(table: self) }

    var underestimatedCount: Int { count }
}
#endif
