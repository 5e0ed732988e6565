/// One directory of a snapshot: its entries sorted by name bytes.
///
/// Directories are objects because the diff moves whole subtrees around while it replays a
/// rename, and must find an item's *current* path by walking up to the root afterwards.
/// Entries are values, so the common case (a file) costs one array slot and its name.
package final class SnapshotDirectory {
    /// The entries sorted by name. Reading or changing them through this property first
    /// merges in the names ``insert(_:)`` set aside (see ``recent``), so every caller that
    /// walks or indexes them sees one sorted array. A read may therefore write: a directory
    /// that takes insertions (the shared watcher's live tree, a diff's old tree) is used by one
    /// thread at a time, as those are; copies handed to others (``deepCopy(parent:)``) hold
    /// nothing set aside.
    package var entries: [SnapshotEntry] {
        _read {
            if !recent.isEmpty { mergeRecent() }
            yield storage
        }
        _modify {
            if !recent.isEmpty { mergeRecent() }
            yield &storage
        }
    }
    private var storage: [SnapshotEntry]
    /// New names that sort before the end of a large directory, sorted, kept apart until they
    /// are as many as the square root of the directory's size, then merged in one pass.
    /// Inserted one at a time into the directory itself, each moved every entry after it: a
    /// live copy of the tree (the shared watcher's) took 6 s to take 50,000 new names with no
    /// order among 50,000 (`subscription: 50k files created among 50k in one directory`).
    /// Never holds a vacancy, nor a name ``storage`` holds.
    private var recent: [SnapshotEntry] = []
    /// The directory that holds this one, or `nil` for a root (or once that parent is gone).
    /// Weak, not unowned: the diff keeps references into subtrees it has detached, and must be
    /// able to walk up from them safely.
    package weak var parent: SnapshotDirectory?
    /// The name in the parent. A ``SnapshotName``, so a short one allocates nothing: an array
    /// per directory was 48 bytes of malloc, 0.5 MiB of a 10,000-directory tree's polling
    /// snapshot.
    package var snapshotName: SnapshotName
    /// ``snapshotName`` as an array (allocates for a short name).
    package var name: [UInt8] {
        get { snapshotName.bytes }
        set { snapshotName = SnapshotName(newValue) }
    }
    /// ``vacancies`` in the low 30 bits and the two flags above them, in the 4 bytes after the
    /// 12 of the name: the object is then 56 bytes, 64 of malloc, where two flags of their own
    /// made it 60 bytes and 80 of malloc (a polling snapshot holds one per directory).
    private var vacanciesAndFlags: UInt32 = 0
    private static var unreadableFlag: UInt32 { 1 << 31 }
    private static var detachedFlag: UInt32 { 1 << 30 }
    private static var vacancyMask: UInt32 { (1 << 30) - 1 }

    /// Set when the directory could not be listed. `entries` then holds what was known before,
    /// so an unreadable directory is not mistaken for an emptied one.
    package var isUnreadable: Bool {
        get { vacanciesAndFlags & Self.unreadableFlag != 0 }
        set { setFlag(Self.unreadableFlag, newValue) }
    }
    /// Set on the top of a subtree the diff removed, so stale references can tell.
    package var isDetached: Bool {
        get { vacanciesAndFlags & Self.detachedFlag != 0 }
        set { setFlag(Self.detachedFlag, newValue) }
    }
    /// How many of `entries` are vacancies (``SnapshotEntry/isVacant``). A billion vacancies
    /// would take 48 GB of entries first; a count past the 30 bits stops there.
    package private(set) var vacancies: UInt32 {
        get { vacanciesAndFlags & Self.vacancyMask }
        set { vacanciesAndFlags = vacanciesAndFlags & ~Self.vacancyMask | Swift.min(newValue, Self.vacancyMask) }
    }

    private func setFlag(_ flag: UInt32, _ isSet: Bool) {
        if isSet { vacanciesAndFlags |= flag } else { vacanciesAndFlags &= ~flag }
    }

    package init(entries: [SnapshotEntry] = [], parent: SnapshotDirectory?, name: SnapshotName, isUnreadable: Bool = false) {
        self.storage = entries
        self.parent = parent
        self.snapshotName = name
        self.isUnreadable = isUnreadable
    }

    package convenience init(entries: [SnapshotEntry] = [], parent: SnapshotDirectory?, name: [UInt8], isUnreadable: Bool = false) {
        self.init(entries: entries, parent: parent, name: SnapshotName(name), isUnreadable: isUnreadable)
    }

    deinit {
        // Let go of, a subtree would release one level per call in turn, as deep as it goes,
        // on whatever thread held the last reference (an app's, with an 8 MiB stack or less):
        // it is taken apart here one directory at a time instead.
        guard storage.contains(where: { $0.directory != nil }) || recent.contains(where: { $0.directory != nil }) else { return }
        var pending: [SnapshotDirectory] = []
        takeSubdirectories(into: &pending)
        while var directory = pending.popLast() {
            if isKnownUniquelyReferenced(&directory) { directory.takeSubdirectories(into: &pending) }
        }
    }

    /// Moves the directories below this one to `pending` and forgets every entry.
    private func takeSubdirectories(into pending: inout [SnapshotDirectory]) {
        for entry in storage { if let directory = entry.directory { pending.append(directory) } }
        for entry in recent { if let directory = entry.directory { pending.append(directory) } }
        storage = []
        recent = []
    }

    /// Binary search by name; the index in ``entries`` where `name` is or would be inserted.
    package func position(of name: SnapshotName) -> (index: Int, found: Bool) {
        if !recent.isEmpty { mergeRecent() }
        return Self.search(storage, for: name)
    }

    package func position(of name: [UInt8]) -> (index: Int, found: Bool) {
        position(of: SnapshotName(name))
    }

    private static func search(_ entries: [SnapshotEntry], for name: SnapshotName) -> (index: Int, found: Bool) {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = SnapshotName.compare(entries[middle].name, name)
            if order == 0 { return (middle, true) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    package func entry(named name: SnapshotName) -> SnapshotEntry? {
        let (index, found) = Self.search(storage, for: name)
        if found { return storage[index].isVacant ? nil : storage[index] }
        guard !recent.isEmpty else { return nil }
        let (recentIndex, inRecent) = Self.search(recent, for: name)
        return inRecent ? recent[recentIndex] : nil
    }

    package func entry(named name: [UInt8]) -> SnapshotEntry? {
        entry(named: SnapshotName(name))
    }

    /// The name of the entry whose bytes are `bytes`, sharing its storage, or `nil`.
    ///
    /// A scan asks the previous scan's directory for every name too long to be kept inline
    /// (``SnapshotScanner``): found, the name costs no allocation, and the two listings share
    /// one copy of it until the previous one goes. Made anew, the names of a large directory
    /// were a second copy for as long as the directory took to list and diff: 1.1 MB of
    /// `/usr/share/man/man1`'s 17,848 names on every scan.
    ///
    /// The search compares the names' first 16 bytes as two integers, and their bytes only
    /// where those are alike, so that a lookup costs about what the allocation it saves does.
    package func storedName(equalTo bytes: UnsafeRawBufferPointer) -> SnapshotName? {
        if !recent.isEmpty { mergeRecent() }
        let (high, low) = SnapshotName.leadingWords(of: bytes)
        var lower = 0
        var upper = storage.count
        while lower < upper {
            let middle = (lower + upper) / 2
            let stored = storage[middle].name
            let leading = stored.leadingWords
            let order: Int
            if leading.high != high {
                order = leading.high < high ? -1 : 1
            } else if leading.low != low {
                order = leading.low < low ? -1 : 1
            } else {
                order = stored.withBytes { compareRawBytes($0, bytes) }
            }
            if order == 0 { return stored }
            if order < 0 { lower = middle + 1 } else { upper = middle }
        }
        return nil
    }

    /// The entry at `relativePath` below this directory (names joined by `/`), if every
    /// directory on the way is listed; `nil` for an empty path, which names this directory.
    package func entry(atRelativePath relativePath: [UInt8]) -> SnapshotEntry? {
        var directory = self
        var found: SnapshotEntry?
        for component in relativePath.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if found != nil {
                guard let next = found?.directory else { return nil }
                directory = next
            }
            guard let entry = directory.entry(named: SnapshotName(Array(component))) else { return nil }
            found = entry
        }
        return found
    }

    /// Changes the entry named `name` in place, without merging what is set aside; `false` if
    /// there is none.
    @discardableResult
    package func updateEntry(named name: SnapshotName, _ body: (inout SnapshotEntry) -> Void) -> Bool {
        let (index, found) = Self.search(storage, for: name)
        if found {
            guard !storage[index].isVacant else { return false }
            body(&storage[index])
            return true
        }
        guard !recent.isEmpty else { return false }
        let (recentIndex, inRecent) = Self.search(recent, for: name)
        guard inRecent else { return false }
        body(&recent[recentIndex])
        return true
    }

    /// Inserts or replaces the entry with `entry.name` (a vacancy of that name included).
    package func insert(_ entry: SnapshotEntry) {
        let (index, found) = Self.search(storage, for: entry.name)
        if found {
            if storage[index].isVacant && vacancies > 0 { vacancies -= 1 }
            storage[index] = entry
        } else if index == storage.count && recent.isEmpty {
            storage.append(entry)  // names arriving in order (a listing, a subtree placed whole)
        } else if storage.count < Self.directInsertionLimit {
            if !recent.isEmpty { mergeRecent() }
            storage.insert(entry, at: Self.search(storage, for: entry.name).index)
        } else {
            let (recentIndex, inRecent) = Self.search(recent, for: entry.name)
            if inRecent {
                recent[recentIndex] = entry
            } else {
                recent.insert(entry, at: recentIndex)
                if recent.count * recent.count > storage.count { mergeRecent() }
            }
        }
        if let directory = entry.directory {
            directory.parent = self
            directory.snapshotName = entry.name
            directory.isDetached = false
        }
    }

    /// Below this many entries a new name goes straight into its place.
    private static var directInsertionLimit: Int { 1_024 }

    /// Merges ``recent`` into ``storage`` in one pass.
    private func mergeRecent() {
        var merged: [SnapshotEntry] = []
        merged.reserveCapacity(storage.count + recent.count)
        var next = 0
        for entry in storage {
            while next < recent.count && SnapshotName.compare(recent[next].name, entry.name) < 0 {
                merged.append(recent[next])
                next += 1
            }
            merged.append(entry)
        }
        merged.append(contentsOf: recent[next...])
        storage = merged
        recent = []
    }

    @discardableResult
    package func remove(named name: SnapshotName) -> SnapshotEntry? {
        let (index, found) = position(of: name)
        guard found, !storage[index].isVacant else { return nil }
        return storage.remove(at: index)
    }

    /// Removes the entry with `name` by leaving a vacancy in its place, which moves nothing:
    /// for a caller that removes many entries of a large directory and then calls
    /// ``removeVacancies()`` once (removing one by one moves the entries after each, so
    /// emptying half of a 100,000-entry directory moved entries 2.5 billion times).
    /// A name still set aside by ``insert(_:)`` is simply taken out of that small list.
    /// - Returns: the entry that was there.
    @discardableResult
    package func vacate(named name: SnapshotName) -> SnapshotEntry? {
        let (index, found) = Self.search(storage, for: name)
        guard found else {
            guard !recent.isEmpty else { return nil }
            let (recentIndex, inRecent) = Self.search(recent, for: name)
            return inRecent ? recent.remove(at: recentIndex) : nil
        }
        guard !storage[index].isVacant else { return nil }
        let removed = storage[index]
        storage[index] = SnapshotEntry(vacancyNamed: name)
        vacancies += 1
        return removed
    }

    /// Vacancies made in bulk: `count` of them were put into `entries` directly.
    package func noteVacancies(_ count: Int) {
        vacancies = UInt32(truncatingIfNeeded: Swift.min(Int(vacancies) + count, Int(Self.vacancyMask)))
    }

    /// Drops the vacancies ``vacate(named:)`` and its callers left, in one pass.
    package func removeVacancies() {
        guard vacancies > 0 else { return }
        storage.removeAll { $0.isVacant }
        vacancies = 0
    }

    /// Removes the entry with `name` in constant time beyond the search, for a caller that
    /// removes entries one at a time for good (a live copy of the tree following events: `rm -rf`
    /// of a 100,000-file directory removes them in hash order, each from the middle). It
    /// leaves a vacancy, and drops them all once they are as many as the live entries, so the
    /// entries moved stay in proportion to the removals.
    @discardableResult
    package func removeLeavingVacancy(named name: SnapshotName) -> SnapshotEntry? {
        guard let removed = vacate(named: name) else { return nil }
        if Int(vacancies) > Swift.max(16, storage.count / 2) { removeVacancies() }
        return removed
    }

    @discardableResult
    package func remove(named name: [UInt8]) -> SnapshotEntry? {
        remove(named: SnapshotName(name))
    }

    /// The path from the snapshot root, or `nil` if this directory is no longer attached.
    package func relativePath() -> [UInt8]? {
        var components: [SnapshotName] = []
        var length = 0
        var current: SnapshotDirectory? = self
        while let directory = current {
            if directory.isDetached { return nil }
            guard let parent = directory.parent else { break }
            components.append(directory.snapshotName)
            length += directory.snapshotName.count + 1
            current = parent
        }
        var path: [UInt8] = []
        path.reserveCapacity(length)
        for component in components.reversed() {
            if !path.isEmpty { path.append(UInt8(ascii: "/")) }
            component.withBytes { path.append(contentsOf: $0) }
        }
        return path
    }

    /// Points every subdirectory of this tree back at the directory that holds it.
    ///
    /// A scan that shared subtrees with this tree (``SnapshotScanner/scan(root:sharingWith:abandoning:)``)
    /// left its own copies of them here, whose parents are that scan's directories. A caller
    /// that throws that scan away and scans again must call this first: otherwise those
    /// parents are freed, and the diff finds the paths of whatever lies below them cut short
    /// (`renamed a (from i)` for `x/a` from `x/i`). Walked with a stack of its own, since a tree
    /// may be deeper than a thread's stack allows recursion.
    package func reattachSubtrees() {
        var pending: [SnapshotDirectory] = [self]
        while let directory = pending.popLast() {
            for entry in directory.entries {
                guard let child = entry.directory else { continue }
                if child.parent !== directory { child.parent = directory }
                pending.append(child)
            }
        }
    }

    /// Number of entries below this directory, recursively.
    package var recursiveCount: Int {
        entries.reduce(0) { $0 + ($1.isVacant ? 0 : 1 + ($1.directory?.recursiveCount ?? 0)) }
    }
}

/// One item in a directory.
///
/// A polling snapshot holds one per item, so this layout is most of its memory: 48 bytes.
/// - The name, inline when short, with a directory's listing in its place
///   (``SnapshotEntryName``): 12 bytes.
/// - The values that differ from file to file: the inode's and the size's low 32 bits, and
///   three times.
/// - An index into ``FileAttributeTable`` for the rest of the status, which a tree repeats:
///   device, mode, owner, group, link count, and the high 32 bits of the inode and the size,
///   zero for every file under 4 GiB and every inode number of ext4.
///
/// It was 88 bytes while the status was stored whole, 72 while the size was, and 64 while the
/// listing had a field of its own and the inode 8 bytes. ``status`` reads back exactly what
/// was stored.
package struct SnapshotEntry {
    private var storedName: SnapshotEntryName
    /// Laid out in the 4 bytes after the 12 of the name, where a 16-byte name ended.
    private var inodeLowBits: UInt32
    private var modificationTime: Int64
    private var changeTime: Int64
    private var birthTime: Int64
    /// The size's low 32 bits; the high ones are in the attributes.
    private var sizeLowBits: UInt32
    /// Device, mode, owner, group, link count and the high bits of the inode and the size
    /// (``FileAttributeTable``).
    private var attributes: UInt32

    package init(name: SnapshotName, status: FileStatus, directory: SnapshotDirectory? = nil) {
        self.storedName = SnapshotEntryName(name: name, listing: directory)
        self.inodeLowBits = UInt32(truncatingIfNeeded: status.inode)
        self.modificationTime = status.modificationTime
        self.changeTime = status.changeTime
        self.birthTime = status.birthTime
        self.sizeLowBits = UInt32(truncatingIfNeeded: status.size)
        self.attributes = FileAttributeTable.index(of: SharedFileAttributes(status))
    }

    package init(name: [UInt8], status: FileStatus, directory: SnapshotDirectory? = nil) {
        self.init(name: SnapshotName(name), status: status, directory: directory)
    }

    package var name: SnapshotName {
        @inline(__always) get { storedName.name }
        set { storedName.name = newValue }
    }

    /// The listing of a directory that the scan descended into (recursive mode), else `nil`.
    package var directory: SnapshotDirectory? {
        @inline(__always) get { storedName.listing }
        set { storedName.listing = newValue }
    }

    package var status: FileStatus {
        get {
            let shared = FileAttributeTable.attributes(at: attributes)
            return FileStatus(
                device: shared.device, inode: shared.inode(withLowBits: inodeLowBits), mode: shared.mode,
                userID: shared.userID, groupID: shared.groupID, linkCount: shared.linkCount,
                size: shared.size(withLowBits: sizeLowBits),
                modificationTime: modificationTime, changeTime: changeTime, birthTime: birthTime
            )
        }
        set {
            inodeLowBits = UInt32(truncatingIfNeeded: newValue.inode)
            modificationTime = newValue.modificationTime
            changeTime = newValue.changeTime
            birthTime = newValue.birthTime
            sizeLowBits = UInt32(truncatingIfNeeded: newValue.size)
            attributes = FileAttributeTable.index(of: SharedFileAttributes(newValue))
        }
    }

    package var itemType: FileItemType { FileItemType(mode: FileAttributeTable.attributes(at: attributes).mode) }

    /// A place held for a name that is about to be inserted or was just removed, so that a
    /// batch of either moves no other entry (``SnapshotDirectory/vacate(named:)``). Lookups,
    /// counts and copies do not see it. ``SnapshotDiff`` leaves none once it returns; a tree
    /// kept up to date by removals (``SnapshotDirectory/removeLeavingVacancy(named:)``) keeps
    /// some, in proportion to its live entries.
    package init(vacancyNamed name: SnapshotName) {
        self.init(name: name, status: FileStatus(device: 0, inode: 0, mode: Self.vacantMode))
    }

    /// No `st_mode` has every bit set: the type bits would be 0o170000, which is no type.
    private static var vacantMode: UInt32 { .max }

    package var isVacant: Bool { FileAttributeTable.attributes(at: attributes).mode == Self.vacantMode }
}

/// The state of one watched root at one moment.
package struct RootSnapshot {
    package var status: FileStatus
    /// The tree below the root when it is a directory; `nil` for a single watched file.
    package var tree: SnapshotDirectory?

    package init(status: FileStatus, tree: SnapshotDirectory?) {
        self.status = status
        self.tree = tree
    }

    package var entryCount: Int {
        guard let tree else { return 0 }
        return ProducerThread.withLargeStack { tree.recursiveCount }
    }
}

/// memcmp order on raw name bytes: the order entries are kept in.
@inline(__always)
package func compareBytes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
    lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in compareRawBytes(l, r) } }
}
