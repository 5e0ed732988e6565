package import SystemPackage

/// Turns two snapshots of one tree into the events that transform the first into the second.
///
/// The output obeys the replay invariant by construction: the diff *replays its own events*
/// on the old tree (which it consumes) while it emits them, so every `renamed` names the
/// source's path as it stands at that point of the sequence, no rename ever lands on an item
/// that is still needed, and removals come last, deepest first.
///
/// 1. A merge walk over both trees, name by name, finds what is unchanged (only attribute and
///    content changes to report) and the roots of what differs.
/// 2. Items that vanished from one place are indexed by identity: device, inode, type, and
///    birth time where the file system records it. Without birth time a file must also keep
///    its mtime to count as moved, because inode numbers are reused at once (pairing a new
///    file with a deleted one is the false move other polling watchers report).
/// 3. The new tree is placed parents first: an item found elsewhere in the old tree is
///    `renamed` there (its subtree comes along and is reconciled), anything else is `created`,
///    and an occupant of the wrong identity is removed first.
/// 4. Whatever is left of the old tree is `removed`, children before parents.
/// 5. New items other than directories are `created` last, oldest first.
///
/// One scan sees changes made at different moments together, and cannot tell their order;
/// step 5 comes as close as the disk allows to telling a change made before another one
/// first. A consumer that waits for a marker file it created after its other changes sees the
/// marker's `created` after them: every removal, rename and directory made before it, and the
/// files by birth time (change time where there is none; within one tick, deeper files first,
/// then by inode number), then the order they were placed in (statuses without times keep
/// that order). Told where placed, a marker named to sort early came before the files made
/// before it and before every removal of the same scan (a race hunt, 2026-11-29). Nothing that comes after a new
/// file's `created` concerns it or its path: it stands where it ends, under directories already
/// in place, and the removals are of old items.
package struct SnapshotDiff {
    private let paths: PathBuilder
    private let timestamp: FileSystemEvent.Timestamp
    private var modifications: [FileSystemEvent] = []
    private var events: [FileSystemEvent] = []
    /// `created` events of items other than directories, told after everything else (see
    /// ``events(from:to:root:timestamp:pairsMovedItems:reportsDirectoryTimes:timesOfCreated:)``), with what
    /// orders them.
    private var createdItems: [(event: FileSystemEvent, order: CreationOrder)] = []
    private var removedRoots: [Slot] = []
    private var addedRoots: [(entry: SnapshotEntry, parentPath: [UInt8], target: SnapshotDirectory)] = []
    /// The added roots that may take a vanished item (their identity is ``available``), by
    /// identity, until placed: an occupant that stands where another item must go and is
    /// wanted at one of these is placed there first (see ``place(_:parentPath:into:)``).
    private var wantedAt: [MatchKey: Int] = [:]
    /// Added roots placed ahead of their turn.
    private var placedEarly: Set<Int> = []
    private var available: [MatchKey: Slot] = [:]
    private var leftovers: [Slot] = []
    /// Directories of the old tree holding vacancies (``SnapshotEntry/isVacant``): every
    /// insertion and removal the diff makes leaves or fills one instead of moving the entries
    /// after it, and they are dropped once at the end. One at a time, 50,000 new names among
    /// 50,000 took the polling backend 3.5 s to report and 100,000 among 100,000 took 15 s.
    /// A directory is listed when its first vacancy is made (the trees given to the diff hold
    /// none); one whose vacancies were all filled may be listed again, which costs a check.
    private var vacated: [SnapshotDirectory] = []
    /// Directories of the new tree that could not be listed, each with the old listing it
    /// takes over (``adoptListing(of:into:)``) once the diff is done with it.
    private var adoptions: [(old: SnapshotDirectory, new: SnapshotDirectory)] = []
    /// Whether an item other than a directory found at a new path may be paired with one
    /// gone from another (see ``events(from:to:root:timestamp:pairsMovedItems:reportsDirectoryTimes:timesOfCreated:)``).
    private var pairsMovedItems = true
    /// Report a directory whose modification time moved as `modified` (see ``appendChanges(from:to:path:renamed:into:)``).
    private var reportsDirectoryTimes = false
    /// See ``events(from:to:root:timestamp:pairsMovedItems:reportsDirectoryTimes:timesOfCreated:)``.
    private var timesOfCreated: ((_ path: [UInt8]) -> FileStatus?)?

    /// Where an old item sits in the tree being replayed.
    private struct Slot {
        let parent: SnapshotDirectory
        let name: SnapshotName
        let status: FileStatus
        let directory: SnapshotDirectory?

        init(_ parent: SnapshotDirectory, _ entry: SnapshotEntry) {
            self.parent = parent
            self.name = entry.name
            self.status = entry.status
            self.directory = entry.directory
        }
    }

    /// Identity for pairing moves. Birth time is part of it: inode numbers are reused at once,
    /// so two atomic saves in one interval can give the second file the first one's inode.
    private struct MatchKey: Hashable {
        let device: UInt64
        let inode: UInt64
        let birthTime: Int64
        let type: FileItemType

        init(_ status: FileStatus) {
            device = status.device
            inode = status.inode
            birthTime = status.birthTime
            type = status.itemType
        }
    }

    /// The events that turn `old` into `new`. `old` is consumed: it is left in the shape of
    /// `new` and must not be used again. Directories of `new` that could not be listed take
    /// over the old listing, so an unreadable directory does not look emptied.
    ///
    /// - Parameter pairsMovedItems: `false` when the statuses carry neither birth time nor
    ///   mtime (a kernel backend's model keeps only inode and type): nothing then tells a file
    ///   that moved from a new one that took a deleted file's inode (an atomic save frees one
    ///   that the next `creat` reuses), and reported `renamed`, the new file would keep the
    ///   content the consumer read from the deleted one. Only directories are paired then,
    ///   whose contents the diff reconciles entry by entry; any other item found at another
    ///   path is `created` there, and read again.
    /// - Parameter timesOfCreated: for a new item other than a directory whose status carries
    ///   no times (a kernel backend's model), looks at it on disk (by absolute path), so that
    ///   the new files are told oldest first all the same (``CreationOrder``); `nil` where it
    ///   cannot.
    package static func events(
        from old: SnapshotDirectory,
        to new: SnapshotDirectory,
        root: PathBuilder,
        timestamp: FileSystemEvent.Timestamp = .now(),
        pairsMovedItems: Bool = true,
        reportsDirectoryTimes: Bool = false,
        timesOfCreated: ((_ path: [UInt8]) -> FileStatus?)? = nil
    ) -> [FileSystemEvent] {
        var diff = SnapshotDiff(paths: root, timestamp: timestamp)
        diff.timesOfCreated = timesOfCreated
        diff.pairsMovedItems = pairsMovedItems
        diff.reportsDirectoryTimes = reportsDirectoryTimes
        diff.compare(old, new, path: [])
        defer { diff.completeAdoptions() }
        guard !diff.removedRoots.isEmpty || !diff.addedRoots.isEmpty else { return diff.modifications }
        diff.indexRemovedItems()
        // Only an item that would be paired with what stands in the way: a new file that took
        // the inode of one removed (a marker made right after `rm a0; mkdir a0`), placed ahead
        // of its turn, was told before the files of the directories it followed.
        for (index, added) in diff.addedRoots.enumerated() {
            let key = MatchKey(added.entry.status)
            guard let source = diff.available[key], pairsMovedItems || added.entry.itemType == .directory,
                Self.isSameItem(source.status, added.entry.status, atSamePath: false)
            else { continue }
            diff.wantedAt[key] = index
        }
        for (index, added) in diff.addedRoots.enumerated() where !diff.placedEarly.contains(index) {
            diff.wantedAt[MatchKey(added.entry.status)] = nil
            diff.place(added.entry, parentPath: added.parentPath, into: added.target)
        }
        for slot in diff.removedRoots + diff.leftovers {
            diff.removeIfStillPresent(slot)
        }
        for directory in diff.vacated { directory.removeVacancies() }
        diff.createdItems.sort { $0.order < $1.order }
        return diff.modifications + diff.events + diff.createdItems.map(\.event)
    }

    /// The order in which new items other than directories are told: by birth time (else
    /// change time); within one tick of a coarse clock, deeper items first, then by inode
    /// number; then in the order they were placed (path order within a directory). Statuses
    /// without times (a kernel backend's model, which its rescans compare) are looked up on
    /// disk where the caller can (`timesOfCreated`), or keep the placement order: placed by
    /// name, a marker named to sort early came before the files a kernel backend's rescan
    /// after an overflow found made before it (a race hunt, 2026-12-04).
    ///
    /// Deeper first because a marker belongs at the top of the tree (a scan lists a directory
    /// before what lies below it) and a burst's files below it share its tick: by inode
    /// number alone, which a file system hands out from per-processor batches, 15 of 4,000
    /// files made in `burst/` came after `end-marker` made at the top right after them.
    private struct CreationOrder: Comparable {
        let time: Int64
        let depth: Int
        let inode: UInt64
        let sequence: Int

        init(_ status: FileStatus, path: [UInt8], sequence: Int) {
            time = status.birthTime != 0 ? status.birthTime : status.changeTime
            depth = time != 0 ? path.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) } : 0
            inode = time != 0 ? status.inode : 0
            self.sequence = sequence
        }

        static func < (a: CreationOrder, b: CreationOrder) -> Bool {
            if a.time != b.time { return a.time < b.time }
            if a.depth != b.depth { return a.depth > b.depth }
            if a.inode != b.inode { return a.inode < b.inode }
            return a.sequence < b.sequence
        }
    }

    /// What became of a watched root between two scans.
    package enum RootChange {
        /// Another item stands at the root's path, or a file became a directory or the
        /// reverse: the watched item is gone.
        case replaced
        /// The same directory: its trees are to be diffed.
        case directory(old: SnapshotDirectory, new: SnapshotDirectory)
        /// The same single watched file, and the events between its two states.
        case file([FileSystemEvent])
    }

    /// Decides what became of a root, the one place that does for the polling backend and
    /// for ``FileTreeSnapshot``.
    package static func rootChange(
        from old: RootSnapshot,
        to new: RootSnapshot,
        path: FilePath,
        timestamp: FileSystemEvent.Timestamp = .now()
    ) -> RootChange {
        switch (old.tree, new.tree) {
        case (let oldTree?, let newTree?):
            guard isSameItem(old.status, new.status, atSamePath: true) else { return .replaced }
            return .directory(old: oldTree, new: newTree)
        case (nil, nil):
            return .file(events(fromFile: old.status, to: new.status, path: path, timestamp: timestamp))
        default:
            return .replaced
        }
    }

    /// The changes of a watched directory's own status between two scans (it is the same
    /// directory: ``rootChange(from:to:path:timestamp:)`` said so), by the rule every
    /// directory of a diff follows (``appendChanges(from:to:path:renamed:into:)``).
    package static func events(
        ofRootDirectory old: FileStatus,
        to new: FileStatus,
        root: PathBuilder,
        timestamp: FileSystemEvent.Timestamp = .now(),
        reportsDirectoryTimes: Bool = false
    ) -> [FileSystemEvent] {
        var diff = SnapshotDiff(paths: root, timestamp: timestamp)
        diff.reportsDirectoryTimes = reportsDirectoryTimes
        diff.appendChanges(from: old, to: new, path: [], renamed: false, into: .modifications)
        return diff.modifications
    }

    /// The events between two states of a single watched file (a root that is not a directory).
    package static func events(
        fromFile old: FileStatus,
        to new: FileStatus,
        path: FilePath,
        timestamp: FileSystemEvent.Timestamp = .now()
    ) -> [FileSystemEvent] {
        var diff = SnapshotDiff(paths: PathBuilder(root: path), timestamp: timestamp)
        if isSameItem(old, new, atSamePath: true) {
            diff.appendChanges(from: old, to: new, path: [], renamed: false, into: .modifications)
            return diff.modifications
        }
        // Replaced (an editor's atomic save, a rotation): a new item stands at the watched
        // name, and `created` says so (it replaces what the consumer had), as on every backend.
        return [diff.event(.created, [], type: new.itemType, identity: new.identity)]
    }

    private init(paths: PathBuilder, timestamp: FileSystemEvent.Timestamp) {
        self.paths = paths
        self.timestamp = timestamp
    }

    // MARK: Phase 1: merge walk

    private mutating func compare(_ old: SnapshotDirectory, _ new: SnapshotDirectory, path: [UInt8]) {
        // Shared by the scan because nothing in it changed (`SnapshotScanner.scan(root:sharingWith:)`).
        if old === new { return }
        if new.isUnreadable {
            adoptListing(of: old, into: new)
            return
        }
        var i = 0
        var j = 0
        // Where the names new here go in `old`: before its entry at `i`. They are placed in
        // phase 3; a vacancy holds each one's place so that placing it moves nothing.
        var arrivals: [(before: Int, name: SnapshotName)] = []
        while i < old.entries.count || j < new.entries.count {
            let order: Int
            if i == old.entries.count {
                order = 1
            } else if j == new.entries.count {
                order = -1
            } else {
                order = SnapshotName.compare(old.entries[i].name, new.entries[j].name)
            }
            if order < 0 {
                removedRoots.append(Slot(old, old.entries[i]))
                i += 1
            } else if order > 0 {
                addedRoots.append((new.entries[j], path, old))
                arrivals.append((i, new.entries[j].name))
                j += 1
            } else {
                let o = old.entries[i]
                let n = new.entries[j]
                if Self.isSameItem(o.status, n.status, atSamePath: true) {
                    // The common case by far, an unchanged file or a subtree the scan shared,
                    // builds no path: equal statuses have no change to report.
                    let changed = o.status != n.status
                    guard changed || n.directory !== o.directory else {
                        i += 1
                        j += 1
                        continue
                    }
                    let childPath = path.appendingComponent(n.name)
                    if changed {
                        appendChanges(from: o.status, to: n.status, path: childPath, renamed: false, into: .modifications)
                    }
                    if let newDirectory = n.directory {
                        let oldDirectory = o.directory ?? attachEmptyDirectory(named: o.name, at: i, in: old)
                        compare(oldDirectory, newDirectory, path: childPath)
                    } else if let oldDirectory = o.directory {
                        for child in oldDirectory.entries where !child.isVacant { removedRoots.append(Slot(oldDirectory, child)) }
                    }
                } else {
                    removedRoots.append(Slot(old, o))
                    addedRoots.append((n, path, old))
                }
                i += 1
                j += 1
            }
        }
        guard !arrivals.isEmpty else { return }
        var merged: [SnapshotEntry] = []
        merged.reserveCapacity(old.entries.count + arrivals.count)
        var next = 0
        for (index, entry) in old.entries.enumerated() {
            while next < arrivals.count && arrivals[next].before == index {
                merged.append(SnapshotEntry(vacancyNamed: arrivals[next].name))
                next += 1
            }
            merged.append(entry)
        }
        for arrival in arrivals[next...] { merged.append(SnapshotEntry(vacancyNamed: arrival.name)) }
        if old.vacancies == 0 { vacated.append(old) }
        old.entries = merged
        old.noteVacancies(arrivals.count)
    }

    private mutating func vacate(_ name: SnapshotName, in directory: SnapshotDirectory) {
        let hadNone = directory.vacancies == 0
        if directory.vacate(named: name) != nil && hadNone { vacated.append(directory) }
    }

    private func attachEmptyDirectory(named name: SnapshotName, at index: Int, in parent: SnapshotDirectory) -> SnapshotDirectory {
        let directory = SnapshotDirectory(parent: parent, name: name)
        parent.entries[index].directory = directory
        return directory
    }

    /// Keeps what was known of a directory that can no longer be listed: its old listing as
    /// the diff leaves it, taken over once the diff is done. Taken at once, it kept an item
    /// that the diff then found moved out (`chmod 0 A; mv A/x B/y; mv A A2` between two
    /// scans: `renamed B/y` told, `A2/x` kept as well, and `mv B/y A2/x` then told `modified
    /// A2/x` of a path the consumer no longer had; a race hunt, 2026-12-05).
    private mutating func adoptListing(of old: SnapshotDirectory, into new: SnapshotDirectory) {
        adoptions.append((old, new))
    }

    private func completeAdoptions() {
        for (old, new) in adoptions {
            new.entries = old.entries.filter { !$0.isVacant }
            for entry in new.entries { entry.directory?.parent = new }
        }
    }

    // MARK: Phase 2: identity index

    private mutating func indexRemovedItems() {
        var ambiguous: Set<MatchKey> = []
        func index(_ slot: Slot) {
            let key = MatchKey(slot.status)
            if available.updateValue(slot, forKey: key) != nil { ambiguous.insert(key) }
            if let directory = slot.directory {
                for child in directory.entries where !child.isVacant { index(Slot(directory, child)) }
            }
        }
        for slot in removedRoots { index(slot) }
        // Hard links make identity ambiguous; such items are removed and created, never guessed.
        for key in ambiguous { available[key] = nil }
    }

    // MARK: Phase 3: place the new tree

    /// Places `new`, and before it, where an item stands in its way that is wanted at another
    /// added root, that root (and so on along a chain of names shifted along, `mv f2 f3; mv f1
    /// f2`, which is as long as it is: followed one call within another, 20,000 names shifted
    /// between two scans overflowed an ordinary thread's stack).
    private mutating func place(_ new: SnapshotEntry, parentPath: [UInt8], into target: SnapshotDirectory) {
        var chain = [(entry: new, parentPath: parentPath, target: target)]
        while let next = chain.last {
            // Only the first item of a chain can close a cycle: one placed ahead of it is the
            // occupant of the place before, where the one wanted is no longer in `wantedAt`,
            // so no search from there comes back (and each would run the chain's length).
            let looksForCycle = chain.count == 1
            if let first = placeUnlessInTheWay(next.entry, parentPath: next.parentPath, into: next.target, looksForCycle: looksForCycle) {
                let wanted = addedRoots[first]
                chain.append((wanted.entry, wanted.parentPath, wanted.target))
            } else {
                chain.removeLast()
            }
        }
    }

    /// Places `new`, unless what stands at its name is wanted at another added root: then
    /// returns that root, to be placed first, after which `new` is placed again.
    private mutating func placeUnlessInTheWay(
        _ new: SnapshotEntry, parentPath: [UInt8], into target: SnapshotDirectory, looksForCycle: Bool
    ) -> Int? {
        let path = parentPath.appendingComponent(new.name)
        let key = MatchKey(new.status)

        if let occupant = target.entry(named: new.name) {
            if Self.isSameItem(occupant.status, new.status, atSamePath: true) {
                // Already here: it moved along with an ancestor that was renamed.
                if let slot = available[key], slot.parent === target, slot.name == new.name { available[key] = nil }
                appendChanges(from: occupant.status, to: new.status, path: path, renamed: false, into: .events)
                if let newDirectory = new.directory {
                    let directory = occupant.directory ?? SnapshotDirectory(parent: target, name: new.name)
                    target.insert(SnapshotEntry(name: new.name, status: new.status, directory: directory))
                    reconcile(directory, with: newDirectory, path: path)
                } else if let directory = occupant.directory {
                    leaveListing(of: directory)
                }
                return nil
            }
            // Wanted at another added root (`mv log log.1; touch log`: `log` is placed first,
            // and the old `log` stands there): it goes there now, a rename, instead of being
            // removed here and created there, which told a rotated file or directory as new.
            // An added root's directory matched in both trees, so it stands where it ends.
            if looksForCycle, let index = wantedAt[MatchKey(occupant.status)],
                exchangeAround(new, path: path, into: target, with: occupant, wantedAt: index)
            {
                return nil
            }
            if let index = wantedAt.removeValue(forKey: MatchKey(occupant.status)) {
                placedEarly.insert(index)
                return index
            }
            evict(occupant, from: target, path: path)
        }

        if pairsMovedItems || new.itemType == .directory,
            let source = available[key], Self.isSameItem(source.status, new.status, atSamePath: false),
            let sourceParentPath = source.parent.relativePath(),
            let current = source.parent.entry(named: source.name),
            MatchKey(current.status) == key
        {
            available[key] = nil
            vacate(source.name, in: source.parent)
            let directory = movedDirectory(current.directory, listedAs: new.directory, named: new.name, in: target)
            target.insert(SnapshotEntry(name: new.name, status: new.status, directory: directory))
            events.append(
                event(.renamed, path, previous: sourceParentPath.appendingComponent(source.name), type: new.itemType, identity: new.status.identity)
            )
            appendChanges(from: current.status, to: new.status, path: path, renamed: true, into: .events)
            bringInLine(directory, with: new.directory, path: path)
            return nil
        }

        let created = event(.created, path, type: new.itemType, identity: new.status.identity)
        if new.itemType != .directory {
            var status = new.status
            if status.birthTime == 0 && status.changeTime == 0, let timesOfCreated,
               let found = timesOfCreated(paths.bytes(path)), found.inode == status.inode {
                status = found
            }
            createdItems.append((created, CreationOrder(status, path: path, sequence: createdItems.count)))
        } else {
            events.append(created)
        }
        if let newDirectory = new.directory {
            let directory = SnapshotDirectory(parent: target, name: new.name)
            target.insert(SnapshotEntry(name: new.name, status: new.status, directory: directory))
            for child in newDirectory.entries {
                place(child, parentPath: path, into: directory)
            }
        } else {
            target.insert(SnapshotEntry(name: new.name, status: new.status))
        }
        return nil
    }

    /// Items that traded names between scans: two (`mv a t; mv b a; mv t b`, or a `renameat2`
    /// exchange), or more around a cycle (`mv a t; mv b a; mv c b; mv t c`). Told as
    /// `exchanged` events, one for two items and one fewer than the items for a cycle, each an
    /// exchange the kernel could have made, as the kernel backends tell one. Without this they
    /// were told as renames with one item removed and created again at its new name: a new
    /// item to a consumer that keeps identities, and a directory's whole subtree read again.
    ///
    /// `new` goes where `occupant` stands; `occupant` is wanted at the added root `index`,
    /// where another item may stand that is wanted at another added root, and so on, until
    /// the place reached is the one `new` comes from. The first exchange puts `new` in place
    /// and brings `occupant` to where `new` came from, and each next one trades the item that
    /// arrived there for the next item of the cycle, putting it in place.
    /// - Returns: `false`, changing nothing, unless every item of the cycle is found where the
    ///   one before it goes, within ``longestExchangedCycle`` items.
    private mutating func exchangeAround(
        _ new: SnapshotEntry, path: [UInt8], into target: SnapshotDirectory, with occupant: SnapshotEntry, wantedAt index: Int
    ) -> Bool {
        let key = MatchKey(new.status)
        guard pairsMovedItems || new.itemType == .directory,
            let source = available[key], Self.isSameItem(source.status, new.status, atSamePath: false),
            let current = source.parent.entry(named: source.name), MatchKey(current.status) == key
        else { return false }
        // Each item of the cycle after `new`: where it stands (the place the one before it
        // goes), and the added root it is wanted at. No root comes twice: one item is wanted
        // at each, and the one wanted where `new` goes is `new`, whose place ends the search.
        var cycle: [(occupant: SnapshotEntry, wantedAt: Int)] = []
        var standing = occupant
        var standingIn = (parent: target, name: new.name)
        var wantedIndex = index
        while true {
            let standingKey = MatchKey(standing.status)
            let wanted = addedRoots[wantedIndex]
            guard cycle.count < Self.longestExchangedCycle, pairsMovedItems || standing.itemType == .directory,
                let standingSource = available[standingKey], standingSource.parent === standingIn.parent,
                standingSource.name == standingIn.name,
                Self.isSameItem(standing.status, wanted.entry.status, atSamePath: false)
            else { return false }
            cycle.append((standing, wantedIndex))
            if wanted.target === source.parent && wanted.entry.name == source.name { break }
            guard let next = wanted.target.entry(named: wanted.entry.name), let nextIndex = wantedAt[MatchKey(next.status)] else {
                return false
            }
            standing = next
            standingIn = (wanted.target, wanted.entry.name)
            wantedIndex = nextIndex
        }
        // Paths only now: the search runs along every chain of shifted names, most no cycle.
        guard let sourceParentPath = source.parent.relativePath() else { return false }
        var paths: [[UInt8]] = []
        for link in cycle {
            let wanted = addedRoots[link.wantedAt]
            guard let parentPath = wanted.target.relativePath() else { return false }
            paths.append(parentPath.appendingComponent(wanted.entry.name))
        }
        let sourcePath = sourceParentPath.appendingComponent(source.name)
        available[key] = nil
        events.append(event(.exchanged, path, previous: sourcePath, type: new.itemType, identity: new.status.identity))
        for (link, linkPath) in zip(cycle, paths).dropLast() {
            let arriving = addedRoots[link.wantedAt].entry
            events.append(event(.exchanged, linkPath, previous: sourcePath, type: arriving.itemType, identity: arriving.status.identity))
        }
        // The tree, the index and the changes follow the items to their places.
        var placed: [(directory: SnapshotDirectory?, listing: SnapshotDirectory?, path: [UInt8])] = []
        let arriving = movedDirectory(current.directory, listedAs: new.directory, named: new.name, in: target)
        target.insert(SnapshotEntry(name: new.name, status: new.status, directory: arriving))
        appendChanges(from: current.status, to: new.status, path: path, renamed: true, into: .events)
        placed.append((arriving, new.directory, path))
        for (link, linkPath) in zip(cycle, paths) {
            let occupantKey = MatchKey(link.occupant.status)
            available[occupantKey] = nil
            wantedAt[occupantKey] = nil
            placedEarly.insert(link.wantedAt)
            let wanted = addedRoots[link.wantedAt]
            let directory = movedDirectory(link.occupant.directory, listedAs: wanted.entry.directory, named: wanted.entry.name, in: wanted.target)
            wanted.target.insert(SnapshotEntry(name: wanted.entry.name, status: wanted.entry.status, directory: directory))
            appendChanges(from: link.occupant.status, to: wanted.entry.status, path: linkPath, renamed: true, into: .events)
            placed.append((directory, wanted.entry.directory, linkPath))
        }
        for (directory, listing, at) in placed { bringInLine(directory, with: listing, path: at) }
        return true
    }

    /// The listing an item that moved takes to its new place: its own, or a new empty one if
    /// it was not listed before and is now (`nil` for an item that is no directory).
    private func movedDirectory(
        _ directory: SnapshotDirectory?, listedAs listing: SnapshotDirectory?, named name: SnapshotName, in parent: SnapshotDirectory
    ) -> SnapshotDirectory? {
        directory ?? (listing != nil ? SnapshotDirectory(parent: parent, name: name) : nil)
    }

    /// Brings a moved item's listing in line with its new one, or, where it is no longer
    /// listed, leaves what it held to be removed (``leaveListing(of:)``).
    private mutating func bringInLine(_ directory: SnapshotDirectory?, with listing: SnapshotDirectory?, path: [UInt8]) {
        guard let directory else { return }
        if let listing { reconcile(directory, with: listing, path: path) } else { leaveListing(of: directory) }
    }

    /// Past this many items after the first (33 in all) a cycle is told as renames with one
    /// item removed and created again: the search for the end of a cycle runs the length of a
    /// chain of names shifted along (`mv f2 f3; mv f1 f2`, thousands of them), which is none.
    private static var longestExchangedCycle: Int { 32 }

    /// Brings a directory that now stands at its final place in line with its new listing.
    private mutating func reconcile(_ directory: SnapshotDirectory, with new: SnapshotDirectory, path: [UInt8]) {
        if new.isUnreadable {
            adoptListing(of: directory, into: new)
            return
        }
        for child in new.entries {
            place(child, parentPath: path, into: directory)
        }
        for child in directory.entries where !child.isVacant && new.entry(named: child.name) == nil {
            leftovers.append(Slot(directory, child))
        }
    }

    /// A directory listed before and not now, because a filter leaves its contents out at its
    /// new place (moved below a depth limit, or along with an ancestor that was): what it
    /// held is removed from the filtered tree, unless found placed elsewhere.
    private mutating func leaveListing(of directory: SnapshotDirectory) {
        for child in directory.entries where !child.isVacant {
            leftovers.append(Slot(directory, child))
        }
    }

    /// Removes an item that stands where a different one must go.
    private mutating func evict(_ occupant: SnapshotEntry, from parent: SnapshotDirectory, path: [UInt8]) {
        appendRemovals(of: occupant, path: path)
        forget(occupant, in: parent)
        vacate(occupant.name, in: parent)
        occupant.directory?.isDetached = true
    }

    private mutating func forget(_ entry: SnapshotEntry, in parent: SnapshotDirectory) {
        let key = MatchKey(entry.status)
        if let slot = available[key], slot.parent === parent, slot.name == entry.name { available[key] = nil }
        if let directory = entry.directory {
            for child in directory.entries where !child.isVacant { forget(child, in: directory) }
        }
    }

    // MARK: Phase 4: removals

    private mutating func removeIfStillPresent(_ slot: Slot) {
        // Only the very entry that was recorded: anything placed here since has another status,
        // even when it reuses the old inode number.
        guard let parentPath = slot.parent.relativePath(),
            let current = slot.parent.entry(named: slot.name),
            current.status == slot.status,
            current.directory === slot.directory
        else { return }
        appendRemovals(of: current, path: parentPath.appendingComponent(slot.name))
        vacate(slot.name, in: slot.parent)
        current.directory?.isDetached = true
    }

    private mutating func appendRemovals(of entry: SnapshotEntry, path: [UInt8]) {
        if let directory = entry.directory {
            for child in directory.entries where !child.isVacant {
                appendRemovals(of: child, path: path.appendingComponent(child.name))
            }
        }
        events.append(event(.removed, path, type: entry.itemType, identity: entry.status.identity))
    }

    // MARK: Comparing one item

    /// Whether two statuses describe the same item.
    ///
    /// At the same path, device + inode + type suffice (and birth time, when known, must match).
    /// Across paths, an item without birth time must also keep its mtime, so a deleted file's
    /// inode reused by a new file is not reported as a move.
    package static func isSameItem(_ old: FileStatus, _ new: FileStatus, atSamePath: Bool) -> Bool {
        guard old.inode == new.inode, old.device == new.device, old.itemType == new.itemType else { return false }
        if old.birthTime != 0 && new.birthTime != 0 { return old.birthTime == new.birthTime }
        if atSamePath || old.itemType == .directory { return true }
        return old.modificationTime == new.modificationTime
    }

    /// Which of the diff's lists ``appendChanges(from:to:path:renamed:into:)`` appends to.
    /// Not the list itself, `inout`: a method of the diff given one of its own lists that way
    /// has the list copied for every call (the diff itself is held while the list is changed),
    /// and 20,000 files renamed between two scans took 8 s to tell, 100,000 minutes.
    private enum ChangeList {
        case modifications
        case events
    }

    /// Content and attribute changes of one item. A directory's own times change whenever its
    /// entries do; those changes are already told by the entries' events, so directories only
    /// report permission and ownership changes, and a new modification time only when asked
    /// (``reportsDirectoryTimes``, for `WatchOptions.reportsDirectoryContentChanges`).
    ///
    /// A regular file's content may change while size and mtime stay put: `cp -p`, `rsync -t`
    /// and `touch -r` write the same number of bytes and then restore the old mtime. Only the
    /// change time, which no caller can set, still moves. So a ctime that moved without a
    /// visible attribute change (mode, owner, link count) is a content-change candidate and is
    /// reported `modified`: the consumer re-reads, which is harmless if only an xattr changed
    /// (statx cannot see xattrs). That holds for an item carried through a rename too, although
    /// the rename itself moves the ctime: a rename and a rewrite in one interval cannot be told
    /// apart from the status, and a redundant `modified` costs a re-read where a missing one
    /// costs the consumer a stale file.
    private mutating func appendChanges(from old: FileStatus, to new: FileStatus, path: [UInt8], renamed: Bool, into list: ChangeList) {
        func append(_ event: FileSystemEvent) {
            switch list {
            case .modifications: modifications.append(event)
            case .events: events.append(event)
            }
        }
        let ownership = old.permissions != new.permissions || old.userID != new.userID || old.groupID != new.groupID
        if new.itemType == .directory {
            if reportsDirectoryTimes && old.modificationTime != new.modificationTime {
                append(event(.modified, path, type: .directory, identity: new.identity))
            }
            if ownership { append(event(.attributesChanged, path, type: .directory, identity: new.identity)) }
            return
        }
        let visibleAttributes = ownership || old.linkCount != new.linkCount
        let changeTimeMoved = old.changeTime != new.changeTime
        // Only a regular file has content that can be rewritten in place; a symlink's target
        // cannot change without a new inode, so its lone ctime move is an attribute change.
        // A new link count does not explain the move either: the file's other name removed
        // (or made) and the file rewritten keeping its times, in one interval, left nothing
        // else to see (a random mix's seed 128018 of scenario 28 on polling). A `modified`
        // for a link made or removed elsewhere costs a re-read; only a change of mode or
        // owner is taken as the whole reason.
        let hiddenRewrite = new.itemType == .file && changeTimeMoved && !ownership
        let content = old.modificationTime != new.modificationTime || old.size != new.size || hiddenRewrite
        if content {
            append(event(.modified, path, type: new.itemType, identity: new.identity))
        }
        if visibleAttributes || (!content && !renamed && changeTimeMoved) {
            append(event(.attributesChanged, path, type: new.itemType, identity: new.identity))
        }
    }

    private func event(
        _ kind: FileSystemEvent.Kind,
        _ path: [UInt8],
        previous: [UInt8]? = nil,
        type: FileItemType,
        identity: FileIdentity?
    ) -> FileSystemEvent {
        FileSystemEvent(
            kind: kind,
            path: paths.path(path),
            previousPath: previous.map(paths.path),
            itemType: type,
            isSynthetic: true,
            identity: identity,
            timestamp: timestamp
        )
    }
}

