import FileSystemEventsCore
import SystemPackage

/// One run of a ``DirectoryListing``: the open directory, the source's stream, and the sorted
/// list the app has been given. Used by one iterator, in one task at a time.
final class DirectoryListingSession {
    private enum State {
        case notStarted
        case running(Running)
        /// Between taking the running state out and putting it back, so that the sorted list
        /// is referenced once and changing it never copies the whole array.
        case busy
        case finished
    }

    private struct Running {
        var reader: DirectoryReader
        var stream: FileSystemEventStream
        var updates: FileSystemEventStream.Iterator
        var list: SortedEntryList
        var outstanding = Outstanding()
        /// Whether a directory renamed or exchanged into place has its subtree read from the
        /// disk where the listing does not know it, and exchanged ones always: so for a source
        /// that hears every change (whatever the disk shows, an event for anything that changes
        /// after is still to come). Not for one that compares scans: the disk, read a moment
        /// after the scan, may show a state that comes and goes before the next one, and that
        /// no event will ever correct. A directory rotated through three places by exchanges
        /// faster than the scans left another's children listed in it for good (polling).
        /// Its exchanges swap what is listed instead, as its renames carry it: the list it
        /// starts from is its first scan, so what is listed is what it saw.
        let readsMovedSubtrees: Bool
    }

    /// What a batch left to look at again, carried into the next.
    struct Outstanding {
        /// Names kept as listed because they could not be examined (``DirectoryReader/Lookup/unexaminable``),
        /// looked at again when a directory above them changes attributes (it may be searchable
        /// again): what they hold then, or that they are gone.
        var unexamined: Set<[UInt8]> = []
        /// Names the source says stand that the disk did not show when last read (see
        /// ``replacements(for:reader:list:outstanding:readsMovedSubtrees:listing:root:)``): read again with every batch.
        var unconfirmed: Set<[UInt8]> = []
        /// Directories whose subtree the listing has yet to read: one that arrived (renamed in
        /// from a name the listing did not hold) or was known only by what was told inside it,
        /// and had been renamed on by the end of its batch. Read with every batch, where that
        /// batch's renames take them, until found or gone. Listed without its subtree instead,
        /// such a directory kept its children unlisted for good once its later renames were told.
        var unread: Set<[UInt8]> = []
    }

    private let listing: DirectoryListing
    private let root: PathBuilder
    private var state = State.notStarted

    init(listing: DirectoryListing) {
        self.listing = listing
        self.root = PathBuilder(root: listing.directory)
    }

    func next(isolation actor: isolated (any Actor)?) async throws(FileSystemEventsError) -> DirectoryListingUpdate? {
        switch state {
        case .finished, .busy:
            return nil
        case .notStarted:
            return try await start(isolation: actor)
        case .running(var running):
            state = .busy
            do {
                let update = try await nextChange(&running, isolation: actor)
                if case .busy = state { state = .running(running) }
                return update
            } catch {
                await finish(running, isolation: actor)
                throw error
            }
        }
    }

    // MARK: Start

    /// Opens the directory, starts the source and waits for it to be ready, then lists the
    /// directory. Listing after `ready` means nothing is missed: whatever changes after the
    /// listing has an event still to come, and an event for something the listing already
    /// shows is harmless, because the listing re-reads the entry rather than replaying it.
    ///
    /// That holds for a source that hears every change. One that compares scans (polling) does
    /// not tell of a state that came and went between two of them, so a listing read from disk
    /// after its first scan could show a name made since and gone again before the next one,
    /// for good. Such a source hands over the tree of its first scan, with sizes and times,
    /// and that is the first list: what the source's events then apply to.
    private func start(isolation actor: isolated (any Actor)?) async throws(FileSystemEventsError) -> DirectoryListingUpdate? {
        let options = listing.options
        let reader = try DirectoryReader(listing.directory, isRecursive: options.isRecursive, includesHidden: options.includesHidden)
        var started: FileSystemEventStream?
        do {
            var source = try listing.makeSource(listing.watchOptions)
            if !source.capabilities.isEventDriven {
                var watchOptions = listing.watchOptions
                watchOptions.capturesInitialState = true
                source = try listing.makeSource(watchOptions)
            }
            let stream = source.updates()
            started = stream
            var updates = stream.makeAsyncIterator()
            waitForReady: while true {
                guard let update = try await updates.next(isolation: actor) else {
                    state = .finished
                    await stream.stop()
                    return nil
                }
                if case .ready = update { break waitForReady }
            }
            let scanned = stream.initialState?.first.flatMap { $0.recordsAttributes ? $0.rootSnapshot.tree : nil }
            let (list, update) = try await Self.initialList(reader: reader, scanned: scanned.map { reader.entries(of: $0) },
                                                             order: options.sortOrder, resumingFrom: listing.resumedEntries)
            state = .running(Running(reader: reader, stream: stream, updates: updates, list: list,
                                     readsMovedSubtrees: source.capabilities.isEventDriven))
            return update
        } catch {
            state = .finished
            await started?.stop()
            throw error
        }
    }

    /// Lists the directory and sorts it, away from the caller's actor (a view model on the
    /// main actor must not stall for a large directory): the whole list, or, when resuming, the
    /// change from the app's last list.
    @concurrent
    private static func initialList(
        reader: DirectoryReader,
        scanned: [DirectoryEntry]?,
        order: DirectoryListing.SortOrder,
        resumingFrom previous: [DirectoryEntry]?
    ) async throws(FileSystemEventsError) -> (SortedEntryList, DirectoryListingUpdate) {
        let current: [DirectoryEntry]
        if let scanned { current = scanned } else { current = try reader.listAll() }
        guard let previous else {
            let list = SortedEntryList(order: order, unsorted: current)
            return (list, .listing(list.entries))
        }
        var list = SortedEntryList(order: order, sorted: previous)
        var replacements: [(name: [UInt8], entry: DirectoryEntry?)] = current.map { ($0.nameBytes, $0) }
        let currentNames = Set(current.map(\.nameBytes))
        for name in list.names where !currentNames.contains(name) { replacements.append((name, nil)) }
        let changes = list.apply(replacements) ?? noChanges(list.entries)
        return (list, .changes(changes))
    }

    // MARK: Changes

    /// Waits for the source's next batch of events, folds in every batch already buffered
    /// behind it, and returns the resulting update; batches that change nothing the listing
    /// shows (a write that left size and time as they were) are absorbed.
    private func nextChange(_ running: inout Running, isolation actor: isolated (any Actor)?) async throws(FileSystemEventsError) -> DirectoryListingUpdate? {
        while true {
            guard let update = try await running.updates.next(isolation: actor) else {
                await finish(running, isolation: actor)
                return nil
            }
            guard case .events(var events) = update else { continue }
            while let more = running.stream.nextIfBuffered() {
                if case .events(let moreEvents) = more { events += moreEvents }
            }
            if events.contains(where: { $0.kind == .rootRemoved }) {
                var changes = running.list.removeAll() ?? Self.noChanges([])
                changes.endReason = .directoryRemoved(listing.directory)
                await finish(running, isolation: actor)
                return .changes(changes)
            }
            // Hand the list over (not a copy: `running` gives up its reference), so the batch
            // changes it in place.
            let list = running.list
            running.list = SortedEntryList(order: list.order, unsorted: [])
            let (changed, changes, outstanding) = try await Self.apply(
                events, to: consume list, outstanding: running.outstanding, readsMovedSubtrees: running.readsMovedSubtrees,
                reader: running.reader, listing: listing, root: root)
            running.list = changed
            running.outstanding = outstanding
            if let changes { return .changes(changes) }
        }
    }

    /// One batch, away from the caller's actor: reads what the events point at and applies it.
    @concurrent
    private static func apply(
        _ events: [FileSystemEvent],
        to list: consuming SortedEntryList,
        outstanding: Outstanding,
        readsMovedSubtrees: Bool,
        reader: DirectoryReader,
        listing: DirectoryListing,
        root: PathBuilder
    ) async throws(FileSystemEventsError) -> (SortedEntryList, DirectoryListingChanges?, Outstanding) {
        var outstanding = outstanding
        let replacements = try replacements(for: events, reader: reader, list: list, outstanding: &outstanding,
                                            readsMovedSubtrees: readsMovedSubtrees, listing: listing, root: root)
        let changes = list.apply(replacements)
        return (list, changes, outstanding)
    }

    /// The names the events touch, each with what the disk holds there now, or with nothing
    /// where the source says the name is gone.
    ///
    /// Events say *which* names are in the directory, the disk says what each one holds: every
    /// touched name is read from disk (one `statx`), which makes sizes and times right however
    /// the events of a burst were ordered or coalesced, but whether a name is listed at all
    /// follows the source, the last event that names it deciding. Read from disk alone, a name
    /// could show a state the source never saw and will never tell of: a polling source that
    /// reported `removed n` while `n` had been made again an instant later, and moved away
    /// before the next scan, left the listing showing `n` for good (the next scans saw no `n`,
    /// so nothing named it again). Every source's events replay to the tree on disk, so the
    /// listing's names, kept as its events say, are the directory's once it is quiet.
    ///
    /// So a name the events leave gone is dropped whatever the disk shows (if it is there to
    /// stay, an event for it is still to come), and a name they leave standing that the disk
    /// does not show keeps its entry, or an entry made from the event, until an event says
    /// otherwise; it goes into `unconfirmed` and is read again with every batch (it may have
    /// been moved away and back between two scans, which no event tells).
    ///
    /// In a recursive listing a directory that is removed, replaced or renamed away takes its
    /// listed subtree with it, and one renamed into place brings its subtree, read in one walk.
    /// A name that is there but cannot be examined now (below a directory made `r--`) keeps its
    /// listed entry and goes into `unexamined`, to be looked at again when a directory above it
    /// (or the listed directory) changes attributes.
    private static func replacements(
        for events: [FileSystemEvent],
        reader: DirectoryReader,
        list: SortedEntryList,
        outstanding: inout Outstanding,
        readsMovedSubtrees: Bool,
        listing: DirectoryListing,
        root: PathBuilder
    ) throws(FileSystemEventsError) -> [(name: [UInt8], entry: DirectoryEntry?)] {
        let isRecursive = listing.options.isRecursive
        var touched = Set<[UInt8]>()
        var vacated: [[UInt8]] = []  // paths whose listed subtree may be gone (recursive)
        var arrived: [[UInt8]] = []  // directories renamed into place (recursive)
        var attributesChanged: [[UInt8]] = []  // directories whose mode may have changed
        /// What the source says of each name, event by event (`order` counts them): the last
        /// event naming it says whether it stands (with that event, to make an entry from if
        /// the disk shows nothing) or is gone; a later removal, rename away, replacement or
        /// exchange of a directory above it says its subtree went (`subtreeGone`).
        var said: [[UInt8]: (order: Int, stands: Bool, event: FileSystemEvent?)] = [:]
        /// The names of `said` and `carried`, by directory: what a rename takes along is found
        /// below its name, not by a pass over every name of the batch. Built at the first
        /// rename that needs it, as ``listedBelow`` is, and kept up to date from then on: a
        /// batch with no directory renamed (every batch of a one-level listing) never pays for it.
        var spoken: RelativePathIndex? = nil
        /// Directories whose latest word in the batch is that they hold a name an event told of,
        /// with no event of their own (see ``holds(_:_:)``): where the scan that told it was
        /// made, a directory stood there. Any other word said of a name since takes it out.
        var heldOnly = Set<[UInt8]>()
        func say(_ name: [UInt8], _ verdict: (order: Int, stands: Bool, event: FileSystemEvent?)) {
            if said.updateValue(verdict, forKey: name) == nil { spoken?.insert(name) }
            if !heldOnly.isEmpty { heldOnly.remove(name) }
        }
        var subtreeGone: [[UInt8]: Int] = [:]
        var order = 0
        func stands(_ name: [UInt8], _ event: FileSystemEvent?) { say(name, (order, true, event)) }
        /// A directory that holds a name an event told of stands, whatever it held before: its
        /// own `created` event, if the source told it, still makes its entry. Where the source
        /// told none in this batch, an entry made from the event below it stands in for the
        /// directory while the disk cannot show it (renamed on meanwhile), so that nothing is
        /// listed without the directory that holds it: the listing once kept `sd/c0` and
        /// `sd/c1` made from their events and dropped `sd` (gone from the disk, and marked
        /// standing by its children with no event of its own), and then, `sd` not being a
        /// listed directory, its rename away left `sd/c1` listed for good.
        var heldBelow: [[UInt8]: FileSystemEvent] = [:]
        func holds(_ directory: [UInt8], _ event: FileSystemEvent) {
            if let earlier = said[directory], earlier.stands {
                say(directory, (order, true, earlier.event))
                if earlier.event == nil { heldOnly.insert(directory) }
            } else {
                say(directory, (order, true, nil))
                heldOnly.insert(directory)
            }
            if heldBelow[directory] == nil { heldBelow[directory] = event }
        }
        func goes(_ name: [UInt8]) {
            say(name, (order, false, nil))
            forgetHeld(below: name)
        }
        /// Directories whose ancestors (and themselves) an earlier event of the batch held, and
        /// that nothing has said gone since (a few, most recent last): the next event in one
        /// of them holds nothing anew. A burst of creations 3,000 levels down held every
        /// directory on the way once per event, and took 14 s for 2,000 files.
        var heldParents: [ArraySlice<UInt8>] = []
        func forgetHeld(below name: [UInt8]) {
            guard !heldParents.isEmpty else { return }
            heldParents.removeAll { $0.isWithin(name[...]) }
        }

        /// The listed subtree of a directory renamed in this batch, under its new name: the
        /// names the source told of, moved as the rename moves them, with their entries (the
        /// disk says what each holds now). Read from the disk instead, the subtree took in what
        /// the source was never to tell of: a file made in the directory just after the rename
        /// and deleted at once (its two events merged into none) stayed listed for good.
        var carried: [[UInt8]: DirectoryEntry] = [:]
        func noteCarried(_ entry: DirectoryEntry?, at name: [UInt8]) {
            guard let entry else {
                carried[name] = nil
                return
            }
            if carried.updateValue(entry, forKey: name) == nil { spoken?.insert(name) }
        }
        /// The listed names below each listed directory, built at the first rename that needs it.
        var listedBelow: [[UInt8]: [[UInt8]]]? = nil
        /// A directory the batch made or brought, whose contents the batch tells; one it only
        /// said something of (a change in it) may hold anything, to be read from the disk.
        func isToldDirectory(_ name: [UInt8]) -> Bool {
            said[name]?.event.map { $0.itemType == .directory && ($0.kind == .created || $0.kind == .renamed || $0.kind == .exchanged) } ?? false
        }
        /// Carries the subtree of `old` to `new`, as the events before the rename left it (it
        /// is called before the rename's own are noted); `false` where `old` is no directory the
        /// listing knows (moved in from a name it does not list): its subtree is read from disk.
        func carry(_ old: [UInt8], to new: [UInt8]) -> Bool {
            guard let taken = subtree(of: old) else { return false }
            place(taken, from: old, to: new)
            return true
        }
        typealias Subtree = (entries: [[UInt8]: DirectoryEntry], told: [[UInt8]: (order: Int, stands: Bool, event: FileSystemEvent?)])
        /// What a rename of `old` takes along (see ``carry(_:to:)``), or `nil` where `old` is no
        /// directory the listing knows.
        func subtree(of old: [UInt8]) -> Subtree? {
            let isListed = list.entry(named: old)?.type == .directory
            guard isListed || carried[old]?.type == .directory || isToldDirectory(old) else { return nil }
            let slash = UInt8(ascii: "/")
            var names: [[UInt8]] = []
            if isListed {
                if listedBelow == nil {
                    var index: [[UInt8]: [[UInt8]]] = [:]
                    for name in list.names {
                        guard let last = name.lastIndex(of: slash) else { continue }
                        index[Array(name[..<last]), default: []].append(name)
                    }
                    listedBelow = index
                }
                var pending = [old]
                while let directory = pending.popLast() {
                    for name in listedBelow?[directory] ?? [] {
                        names.append(name)
                        pending.append(name)
                    }
                }
            }
            // Taken into the subtree earlier in this batch (told of, or carried by a rename),
            // and not gone since; of the listed names, those no event of the batch took away
            // (the rename of a directory made in this batch where a listed one stood before
            // carries nothing of the listed one's). A listed name an event told of goes with
            // its entry too: a listed directory that held a name told of (its `said` has no
            // event of its own) was moved by name alone, so a second rename of it found no
            // directory to carry and read its subtree from the disk at a path that a third
            // rename had left empty: its listed children were lost for good.
            var toldBelow: [[UInt8]: (order: Int, stands: Bool, event: FileSystemEvent?)] = [:]
            var carriedBelow: [[UInt8]: DirectoryEntry] = [:]
            if spoken == nil {
                var index = RelativePathIndex()
                for name in said.keys { index.insert(name) }
                for name in carried.keys { index.insert(name) }
                spoken = index
            }
            for name in spoken?.paths(below: old) ?? [] {
                let stands = verdict(name)
                if let told = said[name], stands == true { toldBelow[name] = told }
                if let entry = carried[name], stands != false { carriedBelow[name] = entry }
            }
            var entries = carriedBelow
            for name in names where carriedBelow[name] == nil && verdict(name) != false {
                entries[name] = list.entry(named: name)
            }
            return (entries, toldBelow)
        }
        /// Puts a subtree taken from `old` under `new`.
        func place(_ subtree: Subtree, from old: [UInt8], to new: [UInt8]) {
            func moved(_ name: [UInt8]) -> [UInt8] { new + name[old.count...] }
            for (name, entry) in subtree.entries {
                var entry = entry
                let target = moved(name)
                entry.nameBytes = target
                noteCarried(entry, at: target)
                touched.insert(target)
                stands(target, nil)
            }
            for (name, verdict) in subtree.told {
                let target = moved(name)
                touched.insert(target)
                say(target, (order, true, verdict.event))
            }
        }
        /// What the batch knows of the item at `name`: carried there by a rename, as listed, or
        /// made from the event that told of it. With `type`, only what has that type is taken
        /// as carried or listed, and the entry made from the event has it.
        func knownEntry(_ name: [UInt8], ofType type: FileItemType? = nil) -> DirectoryEntry? {
            if let moved = carried[name], type == nil || moved.type == type { return moved }
            if let kept = list.entry(named: name), type == nil || kept.type == type { return kept }
            guard let event = said[name]?.event else { return nil }
            return DirectoryEntry(nameBytes: name, type: type ?? event.itemType, size: 0, modificationTime: event.timestamp,
                                  identity: event.identity ?? FileIdentity(device: 0, inode: 0))
        }
        /// The entry of `name` as the batch told it, where it told a type: the latest event
        /// naming it, else the entry a rename or an exchange carried there.
        func toldEntry(_ name: [UInt8]) -> DirectoryEntry? {
            guard let type = said[name]?.event?.itemType ?? carried[name]?.type, type != .unknown else { return nil }
            return knownEntry(name, ofType: type)
        }
        /// Whether what the listing holds at `name` is the item `event` moved away from it, as
        /// far as identities tell. Over a source that hears every change, a subtree read from
        /// the disk after its batch may be ahead of the events still queued: what stood at the
        /// name later, with that item's subtree. Carried by a rename told after, that subtree
        /// went to the rename's target, where another directory stood, and stayed listed there
        /// for good (inotify, a directory rotated through three places by exchanges and then
        /// renamed, all with no pause: 4 of 18 runs). Such a target is read from the disk.
        func holdsMovedItem(_ name: [UInt8], _ event: FileSystemEvent) -> Bool {
            guard let moved = event.identity else { return true }
            let held = said[name]?.event?.identity ?? knownEntry(name)?.identity
            guard let held, held.inode != 0 else { return true }
            return held == moved
        }
        /// Whether the directory listed at `name`, whose listed names a rename of `name` would
        /// carry, is the item `event` moved, as far as identities tell. ``holdsMovedItem(_:_:)``
        /// asks the batch's own events first, and an event that only told of a change there
        /// (`modified`) says what stood at the name when it happened, not what was listed there:
        /// a directory renamed in and read from the disk at the end of its batch, when another
        /// directory (moved in by an event still queued) already stood there, lists the other
        /// one's names. Carried by the next batch's `modified` and rename of the first, they
        /// went to where the disk never held them (inotify, a storm of 3,000 random operations:
        /// 1 of 90 runs). Such a rename is read from the disk where it went, as one of a
        /// directory the listing does not know.
        func listsMovedDirectory(_ name: [UInt8], _ event: FileSystemEvent) -> Bool {
            guard let moved = event.identity, carried[name] == nil, !isToldDirectory(name),
                  let listed = list.entry(named: name), listed.type == .directory, listed.identity.inode != 0
            else { return true }
            return listed.identity == moved
        }
        /// The two items of an exchange trade places, with what is known of each: one the disk
        /// no longer shows by the end of the batch still has an entry to stand as, and one the
        /// disk shows with another type is kept as told (see `.found` below). What is known of
        /// an item is what the batch told of it before the exchange, else as carried or listed:
        /// the listed entry alone gave the item that had been made at a name earlier in the
        /// batch the type of the one it replaced.
        func tradeEntries(_ first: [UInt8], _ second: [UInt8]) {
            func entry(_ name: [UInt8], as target: [UInt8]) -> DirectoryEntry? {
                var found = toldEntry(name) ?? knownEntry(name)
                found?.nameBytes = target
                return found
            }
            let firstEntry = entry(first, as: second)
            let secondEntry = entry(second, as: first)
            noteCarried(firstEntry, at: second)
            noteCarried(secondEntry, at: first)
        }
        /// Swaps the subtrees of `first` and `second`, for a source that compares scans (see
        /// ``Running/readsMovedSubtrees``); `false` where either is no item the listing knows.
        func exchange(_ first: [UInt8], _ second: [UInt8]) -> Bool {
            func taken(_ name: [UInt8]) -> Subtree? {
                if let subtree = subtree(of: name) { return subtree }
                // A file has nothing below it to take along; a directory the listing does not
                // know is read from the disk.
                let type = carried[name]?.type ?? said[name]?.event?.itemType ?? list.entry(named: name)?.type
                return type != nil && type != .directory ? ([:], [:]) : nil
            }
            guard let fromFirst = taken(first), let fromSecond = taken(second) else { return false }
            place(fromFirst, from: first, to: second)
            place(fromSecond, from: second, to: first)
            tradeEntries(first, second)
            return true
        }
        /// The lengths of the names in `subtreeGone`: a name's ancestors are looked up there at
        /// those lengths only, not at every level of a path that may be thousands deep.
        var subtreeGoneLengths = Set<Int>()
        func takesSubtree(_ name: [UInt8]) {
            guard isRecursive else { return }
            subtreeGone[name] = order
            subtreeGoneLengths.insert(name.count)
            forgetHeld(below: name)
        }
        /// A subtree still to be read from the disk moves with a rename (or an exchange) of a
        /// directory it is in: it is read where the batch leaves it, whether or not the listing
        /// knew the directory renamed. Returns whether `old` is such a subtree or lies in one:
        /// what it holds is then what the disk will say, not what is listed, and it goes to be
        /// read where it went. Carried from the list instead, a directory renamed out of one
        /// just exchanged took the listed names below it, which the exchange had marked gone,
        /// and nothing else: its subtree was lost for good.
        func moveArrived(_ old: [UInt8], _ new: [UInt8], exchanging: Bool) -> Bool {
            var isToBeRead = false
            for (index, path) in arrived.enumerated() {
                if path.isWithin(old) {
                    arrived[index] = new + path[old.count...]
                    if path == old { isToBeRead = true }
                } else if exchanging, path.isWithin(new) {
                    arrived[index] = old + path[new.count...]
                } else if old.isBelow(path) {
                    isToBeRead = true
                }
            }
            return isToBeRead
        }
        /// `true` if the source says the name stands, `false` if gone, `nil` if it said nothing.
        func verdict(_ name: [UInt8]) -> Bool? {
            var latest = said[name].map { (order: $0.order, stands: $0.stands) }
            for length in subtreeGoneLengths where length < name.count && name[length] == UInt8(ascii: "/") {
                if let at = subtreeGone[Array(name[..<length])], at > (latest?.order ?? -1) { latest = (at, false) }
            }
            return latest?.stands
        }

        /// Marks the names on the way to `path` as standing (something changed inside them), and
        /// returns the name the listing keeps for `path` itself, and whether that is `path`
        /// (not a directory it is in, as in a listing that is not recursive).
        func touch(_ path: FilePath, by event: FileSystemEvent) -> (name: [UInt8], isItself: Bool)? {
            guard var relative = root.relative(path), !relative.isEmpty else { return nil }
            var isItself = true
            if let slash = relative.firstIndex(of: UInt8(ascii: "/")) {
                if !isRecursive {
                    relative = Array(relative[..<slash])
                    isItself = false
                    holds(relative, event)
                } else {
                    // A change inside a directory changes the directory's own time and size,
                    // and no other's: one further up is read only if it is not listed yet.
                    // Each read walks the path down from the listed directory, so reading every
                    // directory on the way took a change 3,000 levels down 44 s to list.
                    let parentEnd = relative.lastIndex(of: UInt8(ascii: "/"))
                    let parent = relative[..<(parentEnd ?? 0)]
                    if !heldParents.contains(parent) {
                        for (index, byte) in relative.enumerated() where byte == UInt8(ascii: "/") {
                            let ancestor = Array(relative[..<index])
                            if index == parentEnd || list.entry(named: ancestor) == nil { touched.insert(ancestor) }
                            holds(ancestor, event)
                        }
                        if heldParents.count == 4 { heldParents.removeFirst() }
                        heldParents.append(parent)
                    }
                }
            }
            touched.insert(relative)
            return (relative, isItself)
        }

        // Standing, as far as the source said, since before this batch.
        let unconfirmedBefore = outstanding.unconfirmed
        for unconfirmedName in outstanding.unconfirmed {
            touched.insert(unconfirmedName)
            stands(unconfirmedName, nil)
        }
        // Still to be read, wherever this batch's renames take them.
        arrived.append(contentsOf: outstanding.unread)
        outstanding.unread = []
        for event in events {
            order += 1
            switch event.kind {
            case .overflow, .rootRemoved, .settled:
                continue  // settled: no change to the listing; overflow: the synthetic events that follow name what changed
            case .created, .removed, .renamed, .exchanged, .modified, .attributesChanged:
                if event.kind == .attributesChanged && !outstanding.unexamined.isEmpty && event.itemType == .directory {
                    if let changed = root.relative(event.path) { attributesChanged.append(changed) }
                }
                // A renamed directory's subtree is carried as the batch stood before this
                // event: its own removal of the old name would hide what the old name held.
                var isCarried = false
                if isRecursive, event.kind == .renamed && event.itemType != .file || event.kind == .exchanged,
                   let previous = event.previousPath, let previousName = root.relative(previous), !previousName.isEmpty,
                   let newName = root.relative(event.path), !newName.isEmpty
                {
                    let isToBeRead = !arrived.isEmpty && moveArrived(previousName, newName, exchanging: event.kind == .exchanged)
                    if event.kind == .renamed && !isToBeRead && (!readsMovedSubtrees || holdsMovedItem(previousName, event) && listsMovedDirectory(previousName, event)) {
                        isCarried = carry(previousName, to: newName)
                    }
                    if event.kind == .exchanged && !readsMovedSubtrees && !isToBeRead { isCarried = exchange(previousName, newName) }
                }
                // In a listing of one level, the two listed items of an exchange over a source
                // that compares scans trade their entries too. The event tells the type of the
                // item at its path only; the one at its previous path had no type told, so it
                // was taken from the disk, or, kept as told from an earlier batch (its name in
                // `unconfirmed`), stood as the item the exchange had taken away. A file kept as
                // told where the disk showed a fifo, and then exchanged for that fifo by the
                // next scan, stayed listed as a file for good, waiting for the disk to agree
                // (`list --live --backend polling`, 8,000 creations, fifos, unlinks and
                // exchanges with no pause: every run of 3 seeds).
                if !isRecursive && event.kind == .exchanged && !readsMovedSubtrees,
                   let previous = event.previousPath, let previousName = root.relative(previous), !previousName.isEmpty,
                   !previousName.contains(UInt8(ascii: "/")),
                   let newName = root.relative(event.path), !newName.isEmpty, !newName.contains(UInt8(ascii: "/"))
                {
                    tradeEntries(previousName, newName)
                }
                if let previous = event.previousPath, let (previousName, isItself) = touch(previous, by: event) {
                    if isItself {
                        event.kind == .exchanged ? stands(previousName, nil) : goes(previousName)
                        takesSubtree(previousName)
                    }
                    if isRecursive {
                        vacated.append(previousName)
                        // An exchange brings the other item's subtree to the previous path.
                        if event.kind == .exchanged && !isCarried { arrived.append(previousName) }
                    }
                }
                guard let (relative, isItself) = touch(event.path, by: event) else { continue }
                var replacesSubtree = false
                if isItself {
                    // Another directory than the one renamed in, as far as identities tell:
                    // see `replacesSubtree` below. Asked before this event is noted.
                    let replacesOtherDirectory = event.kind == .renamed && event.itemType == .directory
                        && event.identity != nil && !holdsMovedItem(relative, event)
                    if event.kind == .removed {
                        goes(relative)
                    } else if event.kind == .modified || event.kind == .attributesChanged, let earlier = said[relative], earlier.stands, earlier.event != nil {
                        // A change to what the batch made or brought: that is still what it is.
                        say(relative, (order, true, earlier.event))
                    } else {
                        stands(relative, event)
                    }
                    // What stood below the path went, except below a directory renamed into
                    // place: the kernel renames a directory only onto an empty one, so what is
                    // listed there is the renamed directory's own subtree, listed by a walk
                    // that ran after the rename (the listing reads the disk after the source is
                    // ready, and the source's first events may be older than that). Marked
                    // gone, those names were not carried by a later rename of one of them, and
                    // were lost for good once the directory moved on before the batch's end.
                    // Unless what is listed there is another directory than the one renamed in:
                    // a source that tells an exchange as two renames (`b → a`, then `a → b`)
                    // renames onto a directory that is not empty, whose subtree the first
                    // rename replaces. Kept, it went to `b` with the second rename, and from
                    // there wherever `b` went, listed for good where the disk never held it
                    // (inotify, a storm of 3,000 random operations: 1 of 7 runs).
                    replacesSubtree = event.kind == .renamed ? event.itemType != .directory || replacesOtherDirectory
                        : event.kind == .removed || event.kind == .created || event.kind == .exchanged
                    if replacesSubtree { takesSubtree(relative) }
                }
                guard isRecursive else { continue }
                // What stood at the path goes with its subtree: removed, replaced by a creation or
                // by a rename, or exchanged for the item that now stands there. A rename that
                // replaced it marked its names gone, but only names read again are dropped: left
                // unread, a directory's names stayed listed below the file renamed over it, and
                // below the directory that took its place next (a storm of exchanges and renames
                // of directories with children: 3 to 5 runs in 30; a race hunt, 2026-12-05).
                if event.kind == .removed || event.kind == .created || event.kind == .exchanged || (event.kind == .renamed && replacesSubtree) {
                    vacated.append(relative)
                }
                if (event.kind == .renamed || event.kind == .exchanged) && !isCarried && event.itemType != .file { arrived.append(relative) }
            }
        }

        // The directory itself gone (deleted, or moved away) reads as every name gone; the
        // source's `rootRemoved`, still to come, then ends the listing.
        let descriptor: CInt
        do throws(FileSystemEventsError) {
            descriptor = try reader.open()
        } catch .rootNotFound(_), .notADirectory(_) {
            descriptor = -1
        }
        defer { if descriptor >= 0 { Syscalls.close(descriptor) } }

        // The names kept unexamined below a directory whose attributes changed (the listed
        // directory itself included): what they hold now, or that they went meanwhile.
        if !attributesChanged.isEmpty {
            let changed = Set(attributesChanged)
            let lengths = Set(attributesChanged.map(\.count))
            for name in outstanding.unexamined where changed.contains([]) || Self.hasAncestor(name, in: changed, lengths: lengths) {
                touched.insert(name)
                // A directory that arrived while it could not be examined: its subtree too.
                if isRecursive { arrived.append(name) }
            }
        }
        var known: [[UInt8]: DirectoryEntry] = [:]
        var directories: Set<[UInt8]> = []
        var directoryLengths: Set<Int> = []
        /// What the disk showed at names looked at before the main pass below, which uses it.
        var looked: [[UInt8]: DirectoryReader.Lookup] = [:]
        if isRecursive && descriptor >= 0 && readsMovedSubtrees {
            // A listed directory the batch only says changed (or holds a change), where the
            // disk now shows another directory: what is listed below the name is the other
            // one's, read from a disk that was ahead of the events. An earlier batch read it
            // there when the exchange that put it there had been told as two renames the
            // source could not pair, and the exchange back, told to the source as a change
            // of the names' attributes alone, moved the listed names nowhere: `b/x` stayed
            // listed with the size of the `x` the disk had moved to `a` (inotifytools, an
            // exchange of two directories twice with no pause: 3 runs in 15). Its subtree is
            // read from the disk, as one renamed in is; a change to come inside it is still
            // told by events.
            for name in touched {
                if let event = said[name]?.event, event.kind != .modified && event.kind != .attributesChanged { continue }
                guard carried[name] == nil, let listed = list.entry(named: name), listed.type == .directory,
                      listed.identity.inode != 0, verdict(name) != false
                else { continue }
                let lookup = reader.entry(at: name, in: descriptor)
                looked[name] = lookup
                guard case .found(let entry) = lookup, entry.type == .directory, entry.identity != listed.identity else { continue }
                order += 1
                takesSubtree(name)
                vacated.append(name)
                arrived.append(name)
            }
        }
        if isRecursive && descriptor >= 0 {
            // Every name vacated, not only those listed as directories: an earlier batch may
            // have read a name as a file while names below it were still listed (a file made
            // in `d`, then `d` exchanged with a file: the creation's batch read `d` as the
            // file, and the exchange's batch left `d/old` listed under it for good).
            directories = Set(vacated)
            directoryLengths = Set(vacated.map(\.count))
            if !directories.isEmpty {
                for name in list.names where Self.hasAncestor(name, in: directories, lengths: directoryLengths) { touched.insert(name) }
            }
            for path in Set(arrived) {
                // Removed, or below a directory removed, by a later event of the batch: what
                // the disk shows there now came after (a later batch tells it), and read here it
                // was kept whatever the events said (a directory renamed in and then removed
                // with its parent, the parent made again before the read: its subtree stayed
                // listed below the new parent for good).
                if verdict(path) == false { continue }
                guard let (directory, entries) = reader.listSubtree(path, in: descriptor) else {
                    // Renamed on already: its rename is still to be told, and brings it here.
                    if verdict(path) != false { outstanding.unread.insert(path) }
                    continue
                }
                // The directory as read, not as a look at its name a moment later finds it:
                // another may stand there by then, and its identity listed over these names
                // would misdirect the next rename of this one (see `listsMovedDirectory`). Over
                // a source that compares scans, the name's entry follows what the scan told
                // (see `.found` below).
                if readsMovedSubtrees, let directory { known[path] = directory }
                for entry in entries {
                    known[entry.nameBytes] = entry
                    touched.insert(entry.nameBytes)
                }
            }
        }

        var replacements: [(name: [UInt8], entry: DirectoryEntry?)] = []
        replacements.reserveCapacity(touched.count)
        func drop(_ name: [UInt8]) {
            replacements.append((name, nil))
            if !outstanding.unexamined.isEmpty { outstanding.unexamined.remove(name) }
            if !outstanding.unconfirmed.isEmpty { outstanding.unconfirmed.remove(name) }
        }
        func keep(_ name: [UInt8], _ entry: DirectoryEntry) {
            replacements.append((name, entry))
            if !outstanding.unexamined.isEmpty { outstanding.unexamined.remove(name) }
            if !outstanding.unconfirmed.isEmpty { outstanding.unconfirmed.remove(name) }
        }
        for name in touched {
            if !listing.options.includesHidden && DirectoryEntry.isHidden(name) { continue }
            if descriptor < 0 {
                drop(name)
                continue
            }
            if let entry = known[name] {
                keep(name, entry)
                continue
            }
            let stands = verdict(name)
            // Gone as the source says, whatever the disk shows now.
            if stands == false {
                drop(name)
                continue
            }
            /// The entry of a name the source says stands, where the disk cannot show it: as
            /// listed, else made from the event that told of it (or of a name below it).
            func standingEntry() -> DirectoryEntry? {
                if let known = knownEntry(name) { return known }
                if let below = heldBelow[name] {
                    return DirectoryEntry(
                        nameBytes: name, type: .directory, size: 0, modificationTime: below.timestamp,
                        identity: FileIdentity(device: 0, inode: 0))
                }
                return nil
            }
            /// The entry of a name that stands as the directory an event below it showed (see
            /// `heldOnly`): a directory listed or carried there, else made from that event.
            func heldDirectoryEntry() -> DirectoryEntry? {
                if let known = knownEntry(name, ofType: .directory) { return known }
                guard let below = heldBelow[name] else { return nil }
                return DirectoryEntry(
                    nameBytes: name, type: .directory, size: 0, modificationTime: below.timestamp,
                    identity: FileIdentity(device: 0, inode: 0))
            }
            switch looked.removeValue(forKey: name) ?? reader.entry(at: name, in: descriptor) {
            case .found(let entry):
                // Over a source that compares scans, what the disk shows now may be a state
                // that comes and goes before the next scan, which no event then corrects: a
                // directory and a file exchanged faster than the scans left the directory
                // listed as the file the disk showed a moment after the scan, with the
                // directory's subtree carried below it. An item of another type than the
                // batch told stands as told; the next scan tells what it became. Its entry is
                // read again with the next batch, as one the disk does not show is: where the
                // disk is back as the scan saw it, no scan tells of it again, and the entry
                // kept (its time as listed before the change the scan saw, or made from the
                // event) stayed wrong for good. Until the disk shows the type it stands as.
                //
                // A name the batch only says holds a name told of (a change in a directory
                // below it, with no event of its own) was a directory when the scan was made,
                // and stands as one: as listed or carried, else made from the event below it.
                // Its type taken from the disk, a directory exchanged for a file between the
                // scan and the read was listed as the file with its subtree still below it;
                // the next scan's exchange then took the listed file for an item with nothing
                // below it, carried nothing to where the directory went, and read nothing
                // there: the directory's subtree was lost for good (`list --live --recursive
                // --backend polling`, a random mix with no pause: 1 run in 25 to 40).
                if !readsMovedSubtrees,
                   let told = (heldOnly.contains(name) ? heldDirectoryEntry() : nil)
                       ?? toldEntry(name) ?? (unconfirmedBefore.contains(name) ? knownEntry(name) : nil),
                   told.type != entry.type
                {
                    keep(name, told)
                    outstanding.unconfirmed.insert(name)
                    continue
                }
                keep(name, entry)
            case .absent:
                guard stands == true else {
                    drop(name)  // a name kept unexamined, found gone
                    continue
                }
                // Standing as far as the source knows: kept until an event says otherwise.
                guard let entry = standingEntry() else {
                    drop(name)
                    continue
                }
                replacements.append((name, entry))
                outstanding.unconfirmed.insert(name)
                // A directory the listing never read (known by what was told inside it, in a
                // subtree read from the disk after it had been renamed on): its subtree is read
                // where its rename, still to come, takes it.
                if isRecursive && entry.type == .directory && list.entry(named: name) == nil && carried[name] == nil && !isToldDirectory(name) {
                    outstanding.unread.insert(name)
                }
            case .unexaminable:
                // Below a directory removed or replaced, what was listed went with it, unless
                // an event since says it stands; otherwise it is there, as listed or as the
                // event told it, until it can be examined (when a directory above it changes
                // attributes). An item moved into a directory this user could not search was
                // dropped, and never listed once the directory became searchable again.
                let entry = stands == true ? standingEntry()
                    : Self.hasAncestor(name, in: directories, lengths: directoryLengths) ? nil : list.entry(named: name)
                guard let entry else {
                    drop(name)
                    continue
                }
                replacements.append((name, entry))
                outstanding.unexamined.insert(name)
            }
        }
        return replacements
    }

    /// Looks `name`'s ancestors up at the lengths of `directories`' members only: at every
    /// level of every listed name, a change 3,000 levels down took 20 s to list.
    private static func hasAncestor(_ name: [UInt8], in directories: Set<[UInt8]>, lengths: Set<Int>) -> Bool {
        for length in lengths where length < name.count && name[length] == UInt8(ascii: "/") {
            if directories.contains(Array(name[..<length])) { return true }
        }
        return false
    }

    // MARK: End

    /// Stops the source and waits until it has closed its descriptors, so that when the
    /// iteration ends (cancelled, or the directory gone) nothing of the watch is left open.
    private func finish(_ running: Running, isolation actor: isolated (any Actor)?) async {
        state = .finished
        await running.stream.stop()
    }

    private static func noChanges(_ entries: [DirectoryEntry]) -> DirectoryListingChanges {
        DirectoryListingChanges(entries: entries, difference: [DirectoryEntry]().difference(from: []), removed: [], inserted: [], updated: [], moves: [])
    }
}
