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
        /// Names kept as listed because they could not be examined (``DirectoryReader/Lookup/unexaminable``),
        /// looked at again when a directory above them changes attributes (it may be searchable
        /// again): what they hold then, or that they are gone.
        var unexamined: Set<[UInt8]> = []
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
    private func start(isolation actor: isolated (any Actor)?) async throws(FileSystemEventsError) -> DirectoryListingUpdate? {
        let options = listing.options
        let reader = try DirectoryReader(listing.directory, isRecursive: options.isRecursive, includesHidden: options.includesHidden)
        var started: FileSystemEventStream?
        do {
            let source = try listing.makeSource(listing.watchOptions)
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
            let (list, update) = try await Self.initialList(reader: reader, order: options.sortOrder, resumingFrom: listing.resumedEntries)
            state = .running(Running(reader: reader, stream: stream, updates: updates, list: list))
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
        order: DirectoryListing.SortOrder,
        resumingFrom previous: [DirectoryEntry]?
    ) async throws(FileSystemEventsError) -> (SortedEntryList, DirectoryListingUpdate) {
        let current = try reader.listAll()
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
            let (changed, changes, unexamined) = try await Self.apply(
                events, to: consume list, unexamined: running.unexamined, reader: running.reader, listing: listing, root: root)
            running.list = changed
            running.unexamined = unexamined
            if let changes { return .changes(changes) }
        }
    }

    /// One batch, away from the caller's actor: reads what the events point at and applies it.
    @concurrent
    private static func apply(
        _ events: [FileSystemEvent],
        to list: consuming SortedEntryList,
        unexamined: Set<[UInt8]>,
        reader: DirectoryReader,
        listing: DirectoryListing,
        root: PathBuilder
    ) async throws(FileSystemEventsError) -> (SortedEntryList, DirectoryListingChanges?, Set<[UInt8]>) {
        var unexamined = unexamined
        let replacements = try replacements(for: events, reader: reader, list: list, unexamined: &unexamined, listing: listing, root: root)
        let changes = list.apply(replacements)
        return (list, changes, unexamined)
    }

    /// The names the events touch, each with what the disk holds there now.
    ///
    /// Events are used only to know where to look: the entry is read from disk (one `statx`),
    /// which makes the result right however the events of a burst were ordered or coalesced.
    /// In a recursive listing a directory that is removed, replaced or renamed away takes its
    /// listed subtree with it, and one renamed into place brings its subtree, read in one walk.
    /// A name that is there but cannot be examined now (below a directory made `r--`) keeps its
    /// listed entry and goes into `unexamined`, to be looked at again when a directory above it
    /// (or the listed directory) changes attributes.
    private static func replacements(
        for events: [FileSystemEvent],
        reader: DirectoryReader,
        list: SortedEntryList,
        unexamined: inout Set<[UInt8]>,
        listing: DirectoryListing,
        root: PathBuilder
    ) throws(FileSystemEventsError) -> [(name: [UInt8], entry: DirectoryEntry?)] {
        let isRecursive = listing.options.isRecursive
        var touched = Set<[UInt8]>()
        var vacated: [[UInt8]] = []  // paths whose listed subtree may be gone (recursive)
        var arrived: [[UInt8]] = []  // directories renamed into place (recursive)
        var attributesChanged: [[UInt8]] = []  // directories whose mode may have changed

        func touch(_ path: FilePath) -> [UInt8]? {
            guard var relative = root.relative(path), !relative.isEmpty else { return nil }
            if let slash = relative.firstIndex(of: UInt8(ascii: "/")) {
                if !isRecursive {
                    relative = Array(relative[..<slash])
                } else {
                    // A change inside a directory changes the directory's own time and size.
                    for (index, byte) in relative.enumerated() where byte == UInt8(ascii: "/") {
                        touched.insert(Array(relative[..<index]))
                    }
                }
            }
            touched.insert(relative)
            return relative
        }

        for event in events {
            switch event.kind {
            case .overflow, .rootRemoved, .settled:
                continue  // settled: no change to the listing; overflow: the synthetic events that follow name what changed
            case .created, .removed, .renamed, .exchanged, .modified, .attributesChanged:
                if event.kind == .attributesChanged && !unexamined.isEmpty && event.itemType == .directory {
                    if let changed = root.relative(event.path) { attributesChanged.append(changed) }
                }
                guard let relative = touch(event.path) else { continue }
                if let previous = event.previousPath, let previousRelative = touch(previous), isRecursive {
                    vacated.append(previousRelative)
                    // An exchange brings the other item's subtree to the previous path.
                    if event.kind == .exchanged { arrived.append(previousRelative) }
                }
                guard isRecursive else { continue }
                // What stood at the path goes with its subtree: removed, replaced by a creation,
                // or exchanged for the item that now stands there.
                if event.kind == .removed || event.kind == .created || event.kind == .exchanged { vacated.append(relative) }
                if (event.kind == .renamed || event.kind == .exchanged) && event.itemType != .file { arrived.append(relative) }
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
            for name in unexamined where changed.contains([]) || Self.hasAncestor(name, in: changed) { touched.insert(name) }
        }
        var known: [[UInt8]: DirectoryEntry] = [:]
        var directories: Set<[UInt8]> = []
        if isRecursive && descriptor >= 0 {
            directories = Set(vacated.filter { list.entry(named: $0)?.type == .directory })
            if !directories.isEmpty {
                for name in list.names where Self.hasAncestor(name, in: directories) { touched.insert(name) }
            }
            for path in arrived {
                for entry in reader.listSubtree(path, in: descriptor) {
                    known[entry.nameBytes] = entry
                    touched.insert(entry.nameBytes)
                }
            }
        }

        var replacements: [(name: [UInt8], entry: DirectoryEntry?)] = []
        replacements.reserveCapacity(touched.count)
        for name in touched {
            if !listing.options.includesHidden && DirectoryEntry.isHidden(name) { continue }
            if descriptor < 0 {
                replacements.append((name, nil))
            } else if let entry = known[name] {
                replacements.append((name, entry))
                if !unexamined.isEmpty { unexamined.remove(name) }
            } else {
                switch reader.entry(at: name, in: descriptor) {
                case .found(let entry):
                    replacements.append((name, entry))
                    if !unexamined.isEmpty { unexamined.remove(name) }
                    continue
                case .absent:
                    break
                case .unexaminable:
                    // Below a directory removed or replaced, what was listed went with it;
                    // otherwise it is still there, as listed, until it can be examined.
                    if !Self.hasAncestor(name, in: directories), let kept = list.entry(named: name) {
                        replacements.append((name, kept))
                        unexamined.insert(name)
                        continue
                    }
                }
                replacements.append((name, nil))
                if !unexamined.isEmpty { unexamined.remove(name) }
            }
        }
        return replacements
    }

    private static func hasAncestor(_ name: [UInt8], in directories: Set<[UInt8]>) -> Bool {
        for (index, byte) in name.enumerated() where byte == UInt8(ascii: "/") {
            if directories.contains(Array(name[..<index])) { return true }
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
