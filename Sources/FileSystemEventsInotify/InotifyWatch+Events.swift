#if os(Linux)
import Glibc
import FileSystemEventsCore
import SystemPackage

extension InotifyWatch {
    /// A name the kernel said was created (or moved in), not yet examined.
    ///
    /// The kernel does not say what was created, only its name, and by the time the event is
    /// read the name may hold something else: the item may have been renamed away and another
    /// moved in by events still queued. So a creation is examined only once the events read
    /// with it have been applied to the model, and through a descriptor of its directory that
    /// was checked to be the directory the model means.
    struct PendingCreation {
        let directory: WatchedDirectory
        let name: [UInt8]
        /// `IN_ISDIR`: the kernel's word that the item was a directory.
        let isDirectory: Bool
        /// Monotonic nanoseconds of the first time the creation was deferred because its
        /// name held an item the model has elsewhere (0 if never).
        var deferredSince: UInt64 = 0
        /// For a move onto the name from a place the model does not know (an atomic save whose
        /// temporary file was not reported yet): the inode the model had at the name when the
        /// event was read, which the move replaced. Found there again, it is a new file that
        /// took the replaced one's inode number (ext4 hands a freed number out again at once,
        /// so two saves alternate between two numbers), not a file the model knows.
        var replacedInode: UInt64?
        /// The kernel reported a move onto the name (`IN_MOVED_TO`): once applied, the item is
        /// an arrival (``InotifyWatch/arrivals``).
        var isMoveIn = false
        /// What the name was found to hold by a batch that then found the queue busy and
        /// waited: kept, so the next attempt does not look again, unless an event read since
        /// may have changed it (see ``forgetExaminations(touchedBy:)``).
        var examination: Examination?
        /// For a move onto the name from one whose own creation was still waiting (the item
        /// was made there and moved on untold): where it was made, for the `created` event's
        /// ``FileSystemEvent/madeAt``.
        var madeAt: (directory: WatchedDirectory, name: [UInt8])?
        /// Its place among the creations queued (``InotifyWatch/creationsQueued``), to tell
        /// whether the name left after it (``InotifyWatch/namesLeftWhilePending``).
        var sequence: UInt64 = 0
        /// Not a name the kernel reported made or moved in, but one looked at again to confirm
        /// what the model says it holds (both names of a rename onto an item): where the
        /// watcher may not look, nothing is recorded for it.
        var isCheck = false

        /// This creation, to be examined again: what was found is dropped, and `now`, when given,
        /// becomes the time it first had to wait, unless it had waited before.
        func examinedAgain(waitingSince now: UInt64?) -> PendingCreation {
            var waiting = self
            waiting.examination = nil
            if let now, waiting.deferredSince == 0 { waiting.deferredSince = now }
            return waiting
        }

        /// The name as the kernel names it, the key of ``examinedNames``.
        var examinedName: ExaminedName { ExaminedName(watch: directory.watch, name: name) }
    }

    /// A name a kept examination is about, as the kernel names it: watch descriptor and name.
    struct ExaminedName: Hashable {
        let watch: CInt
        let name: [UInt8]

        /// The name's bytes in one call: an array's own hashing feeds the hasher a byte at a
        /// time, which a burst of 20,000 creations spent a tenth of its time in.
        func hash(into hasher: inout Hasher) {
            hasher.combine(watch)
            name.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// Events after which no kept examination is trusted: they change the watches themselves
    /// (see ``forgetExaminations(touchedBy:)``). `IN_ATTRIB` counts too, but only from a
    /// watch on an item itself (no name): a link count moves only there; a directory hears
    /// mode, owner and times of its children, which no examination keeps (`tar x`, `cp -p`
    /// and `touch` set them on every file they make).
    private static var watchesChanging: Inotify.Mask {
        [.deleteSelf, .moveSelf, .unmount, .queueOverflow, .ignored]
    }

    /// Events that remove or move a name: its examination goes, and so do those that found
    /// more than one link (see ``forgetExaminations(touchedBy:)``).
    private static var namesRemovingOrMoving: Inotify.Mask {
        [.delete, .movedFrom, .movedTo]
    }

    /// How long pending creations wait for a quiet kernel queue before they are examined
    /// anyway, so that a tree that never stops changing still gets its creations reported.
    /// The time the watch spends not reading, for a consumer that is behind, does not count.
    static var maximumResolutionDelayNanoseconds: UInt64 { 500_000_000 }

    /// How long a creation is deferred at most for a rename still queued (see
    /// ``deferredCreations``): past it, the name is taken to hold what was created.
    static var maximumDeferralNanoseconds: UInt64 { 2_000_000_000 }

    /// Translates one kernel read, in order.
    mutating func handle(_ events: [Inotify.Event]) {
        var events = events
        if !eventsAfterPendingMoveFrom.isEmpty {
            events = eventsAfterPendingMoveFrom + events
            eventsAfterPendingMoveFrom = []
        }
        // Not while a rebuild waits or its marker is awaited: those read the events up to a
        // point in the queue, which a move up would cross.
        let reunites = reconcileRequest == nil && awaitedMarker == nil
        if reunites {
            MoveHalves.reunite(&events, pending: pendingMoveFrom)
        }
        if !examinedNames.isEmpty { forgetExaminations(touchedBy: events) }
        var index = events.startIndex
        if reconcileRequest != nil {
            handleWhileAwaitingReconcile(events[...])
            return
        }
        if awaitedMarker != nil {
            guard let afterMarker = skipEventsBeforeMarker(events[...]) else { return }
            index = afterMarker
        }
        if options.reportsDirectoryContentChanges { reportDirectoryContentChanges(events[index...]) }
        if let pair = pendingMovePair {
            pendingMovePair = nil
            if let third = pendingMoveFrom {
                // The mirror's first half ended the last read; its second half starts this one.
                pendingMoveFrom = nil
                if index < events.endIndex, Self.isMirror(from: pair.from, to: pair.to, third, events[index]), handleExchange(pair.from, pair.to, mirror: (third, events[index])) {
                    index += 1
                } else {
                    handleRename(from: pair.from, to: pair.to)
                    pendingMoveFrom = third  // paired (or not) with what follows, as usual
                }
            } else {
                handleMovePair(pair.from, pair.to, in: events, at: &index)
            }
        }
        while index < events.endIndex {
            if reconcileRequest != nil {
                handleWhileAwaitingReconcile(events[index...])
                return
            }
            let event = events[index]
            index += 1
            if madeAtCount > 0 && !event.name.isEmpty && !event.mask.isDisjoint(with: [.create, .delete, .movedTo]) {
                forgetMadeAt(named: event.name, watch: event.watch)
            }
            if let pending = pendingMoveFrom {
                pendingMoveFrom = nil
                if event.mask.contains(.movedTo) && event.cookie == pending.cookie {
                    handleMovePair(pending, event, in: events, at: &index)
                    continue
                }
                // Something else came between: the pending half was a move out of the tree.
                handleMoveOut(pending)
            }
            let mask = event.mask
            // Not dispatched (``dispatch(_:)`` clears it for the events it handles): no event
            // after one of these is the file's own watch hearing a write told before it.
            if !mask.isDisjoint(with: [.queueOverflow, .closeWrite, .movedFrom, .movedTo]) { lastReportedChange = nil }
            if mask.contains(.queueOverflow) {
                requestReconcile(afterOverflow: true)
                continue
            }
            if mask.contains(.ignored) {
                handleIgnored(event)
                continue
            }
            if mask.contains(.closeWrite) {
                // Only asked for when settling; says nothing about the tree.
                noteWriteActivity(event)
                continue
            }
            if settle != nil && mask.contains(.modify) { noteWriteActivity(event) }
            if mask.contains(.movedFrom) {
                guard index < events.endIndex else {
                    // Paired with the IN_MOVED_TO at the start of the next read, by cookie.
                    pendingMoveFrom = event
                    continue
                }
                let next = events[index]
                guard next.mask.contains(.movedTo) && next.cookie == event.cookie else {
                    if reunites && MoveHalves.mayAllHaveComeBetweenHalves(events[index...]) {
                        // Its second half, if it has one, was not queued yet when the queue
                        // was read: it waits for the next read, as at the end of a read, and
                        // what came after it waits with it.
                        pendingMoveFrom = event
                        eventsAfterPendingMoveFrom = Array(events[index...])
                        return
                    }
                    handleMoveOut(event)
                    continue
                }
                index += 1
                handleMovePair(event, next, in: events, at: &index)
                continue
            }
            if mask.contains(.movedTo) {
                if settle != nil && !mask.contains(.isDirectory) { noteWriteActivity(event) }
                handleMoveIn(event)
                continue
            }
            if index >= 2, Self.repeats(event, events[index - 2]) { continue }
            dispatch(event)
        }
    }

    /// Whether `event` is the same change as `previous`, read just before it: merged, as the
    /// kernel merges an event with the one queued before it while both are unread. A reader
    /// that keeps up gets them apart, one `IN_MODIFY` per `write(2)` of a writer appending at
    /// full speed, and each made an event of its own, to be batched and coalesced again
    /// downstream (building its path took 57% of a debug build's time under such a writer,
    /// `perf record`, and the libinotifytools watch then fell a second behind and overflowed).
    /// Only changes of content or attributes: what creates, removes or moves a name is never
    /// the same change twice.
    private static func repeats(_ event: Inotify.Event, _ previous: Inotify.Event) -> Bool {
        event.mask.isSubset(of: [.modify, .attrib, .isDirectory]) && event.mask == previous.mask
            && event.watch == previous.watch && event.cookie == previous.cookie && event.name == previous.name
    }

    /// A complete move pair, `events[index...]` being what follows it in this read.
    ///
    /// `renameat2(RENAME_EXCHANGE)` arrives as two move pairs, the second the mirror of the
    /// first: a swap, not two renames (the first would replace the second). When the pair ends
    /// the read, the mirror may be the start of the next one, so the pair waits for it
    /// (``pendingMovePair``; a read that finds the queue empty takes it for a rename).
    private mutating func handleMovePair(_ from: Inotify.Event, _ to: Inotify.Event, in events: [Inotify.Event], at index: inout Int) {
        // A watched directory that moves also hears IN_MOVE_SELF, queued right after its pair,
        // so between the two pairs of an exchange of directories.
        var next = index
        while next < events.endIndex && events[next].name.isEmpty && events[next].mask.contains(.moveSelf) { next += 1 }
        if next + 1 < events.endIndex {
            if Self.isMirror(from: from, to: to, events[next], events[next + 1]),
               handleExchange(from, to, mirror: (events[next], events[next + 1])) {
                for selfEvent in events[index..<next] { dispatch(selfEvent) }
                index = next + 2
                return
            }
        } else if next == events.endIndex || events[next].mask.contains(.movedFrom) {
            // The read ended here, or with what may be the first half of the mirror.
            for selfEvent in events[index..<next] { dispatch(selfEvent) }
            index = next
            pendingMovePair = (from, to)
            if index < events.endIndex {
                pendingMoveFrom = events[index]
                index += 1
            }
            return
        }
        handleRename(from: from, to: to)
    }

    /// `modified` for each directory an entry was created in, removed from, or moved into or
    /// out of (``WatchOptions/reportsDirectoryContentChanges``), once per read and ahead of the
    /// read's own events, at the directory's path as the model has it before them: its time
    /// moved then, whatever the entries' events come to (a file made and removed before it
    /// could be examined is reported by nothing else).
    private mutating func reportDirectoryContentChanges(_ events: ArraySlice<Inotify.Event>) {
        var seen: Set<CInt> = []
        for event in events where !event.name.isEmpty && !event.mask.isDisjoint(with: [.create, .delete, .movedFrom, .movedTo]) {
            guard seen.insert(event.watch).inserted, let directory = liveDirectory(event.watch), directory.isListed else { continue }
            produced.append(makeEvent(.modified, root: directory.root, relative: directory.relativePath, type: .directory,
                                      identity: FileIdentity(device: directory.device, inode: directory.inode), synthetic: false))
        }
    }

    /// An event that is neither half of a move, to whatever watches its descriptor.
    private mutating func dispatch(_ event: Inotify.Event) {
        changeBeforeThisEvent = lastReportedChange
        lastReportedChange = nil
        guard let target = targets[event.watch] else { return }
        for root in target.fileRoots { handleFileRoot(root, event) }
        for directory in target.directories where directory.isAttached { handle(event, in: directory) }
        if !target.fileLinks.isEmpty { handleFileLinkTarget(event) }
    }

    /// Whether `third` and `fourth` are the mirror of the move pair `from`/`to`.
    private static func isMirror(from: Inotify.Event, to: Inotify.Event, _ third: Inotify.Event, _ fourth: Inotify.Event) -> Bool {
        third.mask.contains(.movedFrom) && fourth.mask.contains(.movedTo) && third.cookie == fourth.cookie
            && third.watch == to.watch && third.name == to.name
            && fourth.watch == from.watch && fourth.name == from.name
    }

    private mutating func handle(_ event: Inotify.Event, in directory: WatchedDirectory) {
        let mask = event.mask
        if event.name.isEmpty {
            handleSelf(event, in: directory)
            return
        }
        if mask.contains(.create) {
            handleCreation(named: event.name, in: directory, isDirectoryHint: mask.contains(.isDirectory))
        } else if mask.contains(.delete) {
            guard let entry = directory.children.removeValue(forKey: event.name) else {
                noteNameLeftWhilePending(event.name, in: directory)
                return
            }
            let path = directory.relativePath.appendingComponent(event.name)
            // Deleted: the kernel has dropped its watch already (IN_IGNORED follows).
            if let child = entry.directory { unwatch(child, droppedByKernel: true) }
            let removed = identity(of: entry, in: directory)
            // A writer may hold the file open through the removed name: see
            // ``watchNamesLeftBehind()``.
            if let settle, !settle.isIdle, entry.type == .file, let removed, hardLinks.knownPathCount(of: removed) > 1 {
                linksRemovedWhileWriting.insert(removed)
            }
            hardLinks.remove(removed, directory, event.name)
            dropFileLink(event.name, in: directory)
            produced.append(makeEvent(.removed, root: directory.root, relative: path, type: entry.type,
                                      identity: removed, synthetic: false))
        } else if mask.contains(.modify) || mask.contains(.attrib) {
            reportChange(mask.contains(.modify) ? .modified : .attributesChanged, named: event.name, in: directory)
        }
    }

    /// A change of content or attributes of `name`, reported for every path of its inode.
    mutating func reportChange(_ kind: FileSystemEvent.Kind, named name: [UInt8], in directory: WatchedDirectory) {
        // A name whose creation waits to be examined: not in the model yet, or still holding
        // there the item a move onto the name replaced (``replacedNames``), which this event
        // is not about. Its own `created` tells what it holds once examined, but if it is a
        // new hard link to a file in view (`ln a b; echo x >> b`, or a link made outside moved
        // in over `b`), the file's other names changed too, and only this event says so: kept
        // until the creation is applied (``changesWhilePending``).
        let replaced = !replacedNames.isEmpty && replacedNames[NameInModel(directory, name)] != nil
        guard !replaced, let entry = directory.children[name] else {
            if !pendingCreations.isEmpty || !deferredCreations.isEmpty {
                if changesWhilePending.isEmpty { changesWhilePendingSince = drainedBeforeRead - Self.changeTimeMarginNanoseconds }
                changesWhilePending.record(kind, for: NameInModel(directory, name))
            }
            return
        }
        if entry.type != .directory || kind == .attributesChanged {
            let id = identity(of: entry, in: directory)
            // Content and attributes belong to the inode: every path of a hard-linked
            // file changed, not only the one the kernel named.
            for (linkDirectory, linkName) in hardLinks.paths(of: id, at: directory, name) {
                produced.append(
                    makeEvent(kind, root: linkDirectory.root, relative: linkDirectory.relativePath.appendingComponent(linkName),
                              type: entry.type, identity: id, synthetic: false)
                )
            }
            if entry.type == .file, let id { lastReportedChange = ReportedChange(identity: id, kind: kind) }
        }
        // A directory the model could not read may have become readable (a chmod), and so may
        // those below it that it kept from being searched (`chmod 0 S; touch S/d/g; chmod 755
        // S` left `S/d/g` unknown, and a directory made in `S/d` unwatched, for good).
        if kind == .attributesChanged, let child = entry.directory {
            rescanUnlistedBecomingReadable(within: child)
        }
        // Written through a name the watcher could not look at: it may be another name of a
        // file in view (`ln top S/h; echo >> S/h` with `S` mode 0), which the files with
        // several names are looked at for once the creations are applied, as for a written
        // name found gone (``checkFilesWrittenThroughLostNames()``).
        if kind == .modified && entry.inode == 0 && entry.type != .directory {
            noteFilesWritten(since: drainedBeforeRead - Self.changeTimeMarginNanoseconds)
        }
    }

    /// Lists a directory that could not be read, on a change of its attributes (the `chmod`
    /// that may make it readable). If it is no longer at its path, a rename still in the queue
    /// moves it: it is crawled once the queue has been read, wherever it is then. Dropped at
    /// that point, it was never listed again (`chmod 755 d; mv d e` read after both).
    mutating func rescanBecomingReadable(_ directory: WatchedDirectory) {
        guard case .stale = rescan(directory, changedSince: nil) else { return }
        if !pendingCrawls.contains(where: { $0 === directory }) { pendingCrawls.append(directory) }
    }

    /// An event about a watched directory itself (no name).
    mutating func handleSelf(_ event: Inotify.Event, in directory: WatchedDirectory) {
        let mask = event.mask
        guard !roots[directory.root].isRemoved, directory.isAttached else { return }
        if mask.contains(.unmount) {
            // The file system under this directory went away: what it held is gone and the
            // mount point's own contents show again. Every watch on it hears this; the
            // topmost directory of that file system is the one to rescan.
            if directory.isRoot {
                removeRoot(directory.root)
            } else if let parent = directory.parent, parent.device != directory.device {
                rescan(directory, changedSince: nil, sameIdentity: false, watchesDroppedByKernel: true)
            }
            return
        }
        guard directory.isRoot else {
            // Its parent's watch reports the same change by name, unless the parent sees
            // another directory there (a mount point's); otherwise only an unreadable
            // directory becoming readable matters here.
            if mask.contains(.attrib) {
                if directory.hearsOwnAttributes {
                    produced.append(makeEvent(.attributesChanged, root: directory.root, relative: directory.relativePath, type: .directory,
                                              identity: FileIdentity(device: directory.device, inode: directory.inode), synthetic: false))
                }
                rescanUnlistedBecomingReadable(within: directory)
            }
            return
        }
        if mask.contains(.deleteSelf) || mask.contains(.moveSelf) {
            removeRoot(directory.root)
        } else if mask.contains(.attrib) {
            produced.append(makeEvent(.attributesChanged, root: directory.root, relative: [], type: .directory,
                                      identity: FileIdentity(device: directory.device, inode: directory.inode), synthetic: false))
            rescanUnlistedBecomingReadable(within: directory)
        }
    }

    /// On a change of `directory`'s own attributes: it, or directories below it that it kept
    /// from being searched, may have become readable. A root has no parent watch to hear its
    /// `chmod` by name (``reportChange(_:named:in:)`` does this for the others): `chmod 0 R;
    /// mkdir -p R/d/x/y; chmod 755 R` as a user without `CAP_DAC_READ_SEARCH` left `R/d/x`
    /// unlisted, and everything made in it later unreported, for good.
    private mutating func rescanUnlistedBecomingReadable(within directory: WatchedDirectory) {
        if !directory.isListed || directory.isKeptWhileUnreadable {
            rescanBecomingReadable(directory)
        } else if mayHoldUnexamined {
            for node in unlistedDirectories(within: directory) { rescanBecomingReadable(node) }
        }
    }

    /// Drops the kept examinations that `events`, read since they were made, may have made
    /// wrong.
    ///
    /// An examination tells what a name held (identity, type, link count), or that it held
    /// nothing. What it holds changes only by a removal, a move or a creation at that name,
    /// each of which the kernel reports under that name, and such a name's examination goes.
    /// A link count also changes by a link made or removed at another name: a new name
    /// found to have more than one link has ``resolvePending(drained:)`` look at every kept
    /// examination again, and a removal or a move anywhere drops those that found more than
    /// one link (a move may take a name out of view, or bring one in). So a kept
    /// examination stays true through a read of changes at other names: a burst of new
    /// files, an archive unpacked with its modes and times, and atomic saves, each a file
    /// written under a temporary name and renamed over the saved one (which forgot every
    /// examination, so a burst of them looked at every waiting name again on every read:
    /// 20,000 saves cost inotifytools 6.5 s of CPU).
    ///
    /// Every kept examination goes on an event that changes the watches themselves, on a link
    /// count change heard by an item's own watch, on a directory removed, moved or exchanged,
    /// and on any removal or move where symlinks are followed: what a followed symlink's name
    /// leads to changes with names elsewhere.
    mutating func forgetExaminations(touchedBy events: [Inotify.Event]) {
        var touched: Set<ExaminedName> = []
        var linksMayHaveChanged = false
        for event in events {
            if !event.mask.isDisjoint(with: Self.watchesChanging) || (event.mask.contains(.attrib) && event.name.isEmpty) {
                forgetExaminations()
                return
            }
            if !event.mask.isDisjoint(with: Self.namesRemovingOrMoving) {
                // A directory removed, moved or exchanged moves paths, watches and listings
                // with it: there every kept examination still goes, as it did for any name.
                guard !event.name.isEmpty, !options.followsSymlinks, !event.mask.contains(.isDirectory) else {
                    forgetExaminations()
                    return
                }
                linksMayHaveChanged = true
            } else if !event.mask.contains(.create) {
                // A write or a close at the name leaves the item there: only a new one matters.
                continue
            }
            let name = ExaminedName(watch: event.watch, name: event.name)
            if examinedNames.contains(name) { touched.insert(name) }
        }
        guard !touched.isEmpty || linksMayHaveChanged else { return }
        func isStale(_ creation: PendingCreation) -> Bool {
            guard let examination = creation.examination else { return false }
            if linksMayHaveChanged, case .found(let status, _, _) = examination, status.linkCount > 1 { return true }
            return touched.contains(creation.examinedName)
        }
        var forgotAny = false
        for index in pendingCreations.indices where isStale(pendingCreations[index]) {
            pendingCreations[index].examination = nil
            forgotAny = true
        }
        for index in deferredCreations.indices where isStale(deferredCreations[index]) {
            deferredCreations[index].examination = nil
            forgotAny = true
        }
        // The leading kept examinations an attempt may skip are no longer all kept.
        if forgotAny { keptExaminations = 0 }
        examinedNames.subtract(touched)
    }

    /// Drops every kept examination.
    mutating func forgetExaminations() {
        keptExaminations = 0
        guard !examinedNames.isEmpty else { return }
        for index in pendingCreations.indices { pendingCreations[index].examination = nil }
        // Creations held behind one that waits for a rename keep what was found too.
        for index in deferredCreations.indices { deferredCreations[index].examination = nil }
        examinedNames.removeAll()
    }

    /// A new name in `directory`, examined once the events read with it have been applied.
    ///
    /// - Parameter replacing: the kernel reported a move onto the name (`IN_MOVED_TO`), which
    ///   replaces whatever stood there without an event of its own; see
    ///   ``PendingCreation/replacedInode``.
    mutating func handleCreation(named name: [UInt8], in directory: WatchedDirectory, isDirectoryHint: Bool, replacing: Bool = false,
                                 isCheck: Bool = false) {
        // The path is joined only for a filter: a burst of creations is mostly this call.
        if !options.filter.isEmpty {
            let path = directory.relativePath.appendingComponent(name)
            guard options.filter.admits(relativePath: path, name: name, isDirectory: isDirectoryHint) else { return }
        }
        var creation = PendingCreation(directory: directory, name: name, isDirectory: isDirectoryHint)
        creation.isMoveIn = replacing
        creationsQueued += 1
        creation.sequence = creationsQueued
        creation.isCheck = isCheck
        if replacing, let replaced = directory.children[name]?.inode {
            creation.replacedInode = replaced
            replacedNames[NameInModel(directory, name)] = replaced
        }
        pendingCreations.append(creation)
    }

    /// Examines what the kernel reported created or moved in, and crawls the directories that
    /// could not be listed at their path, now that the model has caught up with the events
    /// read so far.
    ///
    /// While the kernel still holds unread events the model is behind the disk, and what a
    /// name holds now may not be what its creation meant (`mkdir a; mv a b; mkdir a` reads as
    /// a creation of `a` that `a` no longer is). The kernel queues an event inside the system
    /// call that causes it, so a queue found empty *after* the names were examined proves that
    /// what they hold is explained by the events applied. So: the batch waits while the queue
    /// is busy (one `FIONREAD`, nothing per name), is examined, and is applied only if the
    /// queue is still empty afterwards. It waits at most ``maximumResolutionDelayNanoseconds``
    /// and never beyond the buffer limit (creations waiting to be examined are events owed to
    /// the consumer: past the limit the watch stops reading, and a consumer that is behind
    /// makes the kernel queue overflow, as documented), so a flood neither hides creations nor
    /// grows memory. A batch examined with events still queued (an early batch) is checked two ways:
    /// - a name holding an item the model has at another name (a rename onto it is still
    ///   queued: `ln -s x L; mv L S; mv F L` finds F at L) is not reported: it is deferred to
    ///   the next batch, by when the rename has moved the model's item there;
    /// - a name holding an item the model does not know is reported, but provisionally until
    ///   the queue drains. That item is what the name held when examined, which may be newer
    ///   than the one the creation meant: after `mkdir c; mv c d; mkdir c`, the first `c`
    ///   examined early is the second directory. So a rename of a name in
    ///   ``provisionalNames`` is not trusted to move the model's item: it is told as the
    ///   removal of that item and a creation at the destination, examined there.
    ///
    /// - Parameter drained: the kernel queue was found empty, so the model is as current as
    ///   it can be: what still disagrees with the disk is a move the model missed, and is
    ///   settled by identity or a rescan rather than waited for.
    mutating func resolvePending(drained: Bool) {
        let now = MonotonicClock.nanoseconds()
        if pendingSince == 0 { pendingSince = now }
        let overdue = now - pendingSince >= Self.maximumResolutionDelayNanoseconds
            || pendingCreations.count + deferredCreations.count >= options.bufferLimit
        // Skipped only to save work, never needed for what is told: a batch examined while the
        // queue is busy is kept and waits, by the check after the examination below. So where
        // the caller has just found the queue empty by reading it, that proof stands in for
        // this one, and a single creation costs one `FIONREAD` (the one after), not two.
        let justDrained = drained && kernel?.emptyReadProvesDrained == true
        if !overdue && !justDrained && kernel?.hasPendingEvents() == true { return }
        if !deferredCreations.isEmpty {
            pendingCreations = deferredCreations + pendingCreations
            deferredCreations.removeAll()
            keptExaminations = 0
        }
        var directories = OpenedDirectories()
        defer {
            isResolvingDrained = false
            directories.closeAll()
        }
        var rounds = 0
        while !pendingCreations.isEmpty || !pendingCrawls.isEmpty || !pendingRefilters.isEmpty || !rescansAfterBusyListing.isEmpty {
            rounds += 1
            // What earlier batches left waiting for a quiet queue (directories to list, or
            // to rescan) is done before this batch's creations are told: a consumer that
            // takes a marker file, made after its other changes, as proof that it has heard
            // of them got the contents of a directory moved in before the marker after it.
            // Every event read is applied by now, so an empty queue is a drained one.
            if (!rescansAfterBusyListing.isEmpty || !pendingCrawls.isEmpty || !pendingRefilters.isEmpty)
                && kernel?.hasPendingEvents() != true
            {
                let busyListings = rescansAfterBusyListing
                rescansAfterBusyListing.removeAll()
                for node in busyListings where node.isAttached { rescanNearestResolvable(node) }
                // A rescan may leave directories of its own to list: those too.
                var passes = 0
                while passes < 3 && (!pendingCrawls.isEmpty || !pendingRefilters.isEmpty) && kernel?.hasPendingEvents() != true {
                    passes += 1
                    crawlPendingDirectories(quiet: true, busy: false)
                }
            }
            // Taken, not copied: a batch that waits is updated in place and put back, so a
            // burst's waiting creations are not copied (and retained) again on every attempt.
            var creations = pendingCreations
            pendingCreations = []
            // Examinations are kept in the creations themselves. A kept one holds while its
            // directory is attached and its root watched; the leading ones the last busy
            // attempt left are known to, unless a directory left the model since.
            let generation = WatchedDirectory.linkGeneration.load(ordering: .relaxed)
            let start = keptExaminationsGeneration == generation ? min(keptExaminations, creations.count) : 0
            keptExaminations = 0
            // Which of `start...` this attempt examined (the others kept what they had).
            var examinedNow = [Bool](repeating: false, count: creations.count - start)
            func wasExaminedNow(_ index: Int) -> Bool { index >= start && examinedNow[index - start] }
            var foundNewLink = false
            for index in start..<creations.count {
                if creations[index].examination != nil, creations[index].directory.isAttached,
                   !roots[creations[index].directory.root].isRemoved {
                    continue
                }
                let examination = examine(creations[index], directories: &directories)
                if case .found(let status, _, _) = examination, status.itemType != .directory, status.linkCount > 1 { foundNewLink = true }
                creations[index].examination = examination
                examinedNow[index - start] = true
            }
            if foundNewLink {
                // A link made since may have raised a kept link count: look again.
                for index in creations.indices where !wasExaminedNow(index) {
                    creations[index].examination = examine(creations[index], directories: &directories)
                }
            }
            // Crawls may add and evict watches: what was opened for the examination is not reused.
            directories.closeAll()
            let busy = kernel?.hasPendingEvents() == true
            if busy && !overdue {
                // Something happened while the names were examined: wait for it, keeping what
                // was found (the events that explain the wait say which of it may be stale).
                // A kept examination's name is in ``examinedNames`` already: only new ones are
                // added, so a burst does not hash every waiting name again on every read. A
                // name whose examination goes may stay in the set: it then only makes a later
                // creation there forget a little more than it must.
                for index in creations.indices where foundNewLink || wasExaminedNow(index) {
                    guard creations[index].examination?.isKept == true else {
                        creations[index].examination = nil
                        continue
                    }
                    if wasExaminedNow(index) { examinedNames.insert(creations[index].examinedName) }
                }
                var kept = foundNewLink ? 0 : start
                while kept < creations.count && creations[kept].examination != nil { kept += 1 }
                keptExaminations = kept
                keptExaminationsGeneration = generation
                if pendingCreations.isEmpty {
                    pendingCreations = creations
                } else {
                    pendingCreations = creations + pendingCreations
                }
                return
            }
            let examined = creations.map { $0.examination ?? .ignored }
            examinedNames.removeAll()
            pendingSince = 0
            let quiet = drained && !busy
            isResolvingDrained = quiet
            let deferred = busy ? renamedOntoLater(creations, examined, now: now) : []
            findNamesInView(ofFilteredOutLinks: examined)
            defer { namesOfFilteredOutLinks.removeAll() }
            // Creations are told in the order the kernel queued them: once one waits, every
            // later one of the batch waits behind it, looked at again with it. Told first, a
            // later one could be a marker (a file written after all else) that a consumer
            // takes as proof it has heard of everything before it, while an earlier creation
            // is still to come.
            // The wait is as bounded as the first one's: a creation whose directory stays stale
            // holds the rest for at most ``maximumDeferralNanoseconds``, so a tree that never
            // stops changing still gets its creations told.
            var held: [PendingCreation] = []
            var heldForRename = false
            var holdsRest = false
            for (index, (creation, examination)) in zip(creations, examined).enumerated() {
                let waitsForRename = deferred.contains(index)
                if waitsForRename || holdsRest {
                    if held.isEmpty { heldForRename = waitsForRename }
                    if !waitsForRename, examination.isKept {
                        // Held only behind an earlier creation: what its name holds stays
                        // known, as a busy batch's does, until an event read since says it may
                        // have changed (``forgetExaminations(touchedBy:)``). Looked at again
                        // on every read instead, a stalled consumer's backlog held behind a
                        // directory renamed beneath it cost up to 128 `statx` calls per name.
                        examinedNames.insert(creation.examinedName)
                        held.append(creation)
                    } else {
                        held.append(creation.examinedAgain(waitingSince: waitsForRename ? now : nil))
                    }
                    holdsRest = true
                    continue
                }
                if !replacedNames.isEmpty && (creation.replacedInode != nil || examination.foundItem) {
                    // Applied or waiting again, the name's item is what the disk showed (or the
                    // creation's own, examined again): no longer the one the move replaced.
                    // So too after any creation at the name found an item there (a check, or
                    // an exchange's, which the mark may have followed): the arrival's own
                    // creation, still held, would leave a mark there that kept later writes
                    // from being told until every creation was applied, and then dropped them.
                    // (A name found empty keeps it: a rename of the arrival still queued looks.)
                    replacedNames[NameInModel(creation.directory, creation.name)] = nil
                }
                if apply(creation, examination, quiet: quiet, provisional: busy) == .waits {
                    let waiting = creation.examinedAgain(waitingSince: now)
                    held.append(waiting)
                    holdsRest = now &- waiting.deferredSince < Self.maximumDeferralNanoseconds
                } else if !evictedNames.isEmpty {
                    let waiting = examineEvictedNames(quiet: quiet, provisional: busy)
                    if !waiting.isEmpty {
                        held.append(contentsOf: waiting)
                        holdsRest = true
                    }
                }
            }
            if heldForRename {
                deferredCreations.append(contentsOf: held)
            } else {
                pendingCreations.append(contentsOf: held)
            }
            crawlPendingDirectories(quiet: quiet, busy: busy)
            if !quiet || rounds >= 3 { break }
        }
        if pendingCreations.isEmpty && deferredCreations.isEmpty {
            madeAtCount = 0
            if !replacedNames.isEmpty { replacedNames.removeAll() }
            if !namesLeftWhilePending.isEmpty { namesLeftWhilePending.removeAll() }
            if !changesWhilePending.isEmpty { changesWhilePending.removeAll() }
            if writtenNameGoneSince == nil && !survivingLinksOfWrittenFiles.isEmpty { survivingLinksOfWrittenFiles.removeAll() }
        }
    }

    /// Lists the directories that could not be listed at their path yet (``pendingCrawls``).
    /// One still not where the model says with nothing queued to explain it means the model
    /// missed a move: rescanned from the nearest directory that is where it should be, as are
    /// the directories moved under a path filter (``pendingRefilters``), once the queue is read.
    private mutating func crawlPendingDirectories(quiet: Bool, busy: Bool) {
        let crawls = pendingCrawls
        pendingCrawls.removeAll()
        var stale: [WatchedDirectory] = []
        for node in crawls {
            guard !node.isListed, node.watch < 0, !roots[node.root].isRemoved, node.isAttached else { continue }
            let before = pendingCrawls.count
            crawl(node, emitting: true)
            if pendingCrawls.count > before && pendingCrawls.last === node && quiet {
                pendingCrawls.removeLast()
                stale.append(node)
            }
        }
        if !evictedNames.isEmpty { pendingCreations += examineEvictedNames(quiet: quiet, provisional: busy) }
        // Still not where the model says, with nothing left in the queue to explain it:
        // the model missed a move. Rescan from the nearest directory that is where it
        // should be.
        for node in stale where node.isAttached {
            if kernel?.hasPendingEvents() == true {
                pendingCrawls.append(node)
            } else {
                rescanNearestResolvable(node.parent ?? node)
            }
        }
        if quiet && !pendingRefilters.isEmpty && kernel?.hasPendingEvents() != true {
            let moved = pendingRefilters
            pendingRefilters.removeAll()
            for node in moved where node.isAttached { rescanNearestResolvable(node) }
        }
        // A rescan evicts too.
        if !evictedNames.isEmpty { pendingCreations += examineEvictedNames(quiet: quiet, provisional: busy) }
    }

    /// Examines and applies, at once, the names that stale directories left
    /// (``evictedNames``), as creations: what one holds now was never reported. Only a watch
    /// resolving a drained queue evicts, so the disk is what the events read explain.
    ///
    /// - Returns: the names to examine again with the next batch, in order.
    private mutating func examineEvictedNames(quiet: Bool, provisional: Bool) -> [PendingCreation] {
        var waiting: [PendingCreation] = []
        var rounds = 0
        while !evictedNames.isEmpty && rounds < 64 {
            rounds += 1
            let (directory, name) = evictedNames.removeFirst()
            guard directory.isAttached, directory.children[name] == nil else { continue }
            let creation = PendingCreation(directory: directory, name: name, isDirectory: true)
            var directories = OpenedDirectories()
            let examination = examine(creation, directories: &directories)
            directories.closeAll()
            // Not a name the kernel reported: one the watcher may not look at is left alone
            // rather than reported as something it cannot see.
            if case .inaccessible = examination { continue }
            if apply(creation, examination, quiet: quiet, provisional: provisional) == .waits {
                waiting.append(creation)
            }
        }
        // A chain of evictions longer than that is examined with the next batch.
        for (directory, name) in evictedNames {
            waiting.append(PendingCreation(directory: directory, name: name, isDirectory: true))
        }
        evictedNames.removeAll()
        return waiting
    }

    /// What a pending creation's name was found to hold, before anything is applied.
    enum Examination {
        /// The item, with its type and identity (a followed symlink's target's, where the
        /// options follow symlinks to directories).
        case found(FileStatus, type: FileItemType, identity: FileIdentity)
        /// Removed or moved again; whatever did it is in the queue, or was applied.
        case gone
        /// The directory is not where the model says.
        case stale
        /// The watcher may not look (permissions).
        case inaccessible(Errno)
        /// Nothing to do: the directory left the model.
        case ignored
        /// The filter refuses the item. `linkedFile`: the item is a file with more than one
        /// link, perhaps to a file in view, which then has a name out of view.
        case filteredOut(linkedFile: FileIdentity?)

        /// Whether a batch that waits for the queue keeps it, until an event at the name says
        /// it may have changed (``InotifyWatch/forgetExaminations(touchedBy:)``): what the name
        /// held, or that it held nothing. Kept, a name gone by the time it was examined (the
        /// temporary file of an atomic save, renamed over the saved one) is not looked at
        /// again on every read while a burst keeps the queue busy: 5,000 saves in a row made
        /// 370,000 to 690,000 `statx` calls for names no longer there. A directory that was
        /// not where the model says, or could not be looked in, is looked at again.
        var isKept: Bool {
            switch self {
            case .found, .gone: return true
            case .stale, .inaccessible, .ignored, .filteredOut: return false
            }
        }

        /// The name held an item, which the creation puts in the model.
        var foundItem: Bool {
            if case .found = self { return true }
            return false
        }
    }

    private func examine(_ creation: PendingCreation, directories: inout OpenedDirectories) -> Examination {
        let directory = creation.directory
        let name = creation.name
        guard directory.isAttached, !roots[directory.root].isRemoved else { return .ignored }
        let descriptor: CInt
        switch directories.opening(of: directory, opening: { open($0, forLookupOnly: true) }) {
        case .stale: return .stale
        case .inaccessible(let errno): return .inaccessible(errno)
        case .opened(let fd, _): descriptor = fd
        }
        let status: FileStatus
        switch withCString(name, { kernel?.status(of: $0, relativeTo: descriptor, followSymlinks: false) ?? .failure(.badFileDescriptor) }) {
        case .success(let found): status = found
        case .failure(.noSuchFileOrDirectory), .failure(.notDirectory): return .gone
        case .failure(let errno): return .inaccessible(errno)
        }
        var type = status.itemType
        var identity = status.identity
        if options.followsSymlinks && type == .symlink,
           case .success(let target) = withCString(name, { kernel?.status(of: $0, relativeTo: descriptor, followSymlinks: true) ?? .failure(.badFileDescriptor) })
        {
            if target.itemType == .directory, !isAncestor(target.identity, of: directory) {
                type = .directory
                identity = target.identity
            } else if target.itemType == .file {
                // A file through a link: confirmed (and watched) when applied.
                type = .file
            }
        }
        if !options.filter.isEmpty {
            let path = directory.relativePath.appendingComponent(name)
            guard options.filter.admits(relativePath: path, name: name, isDirectory: type == .directory) else {
                return .filteredOut(linkedFile: status.itemType == .file && status.linkCount > 1 ? status.identity : nil)
            }
        }
        return .found(status, type: type, identity: identity)
    }

    /// The creations of an early batch whose names hold an item that the model has, by
    /// identity, at another name: the rename that put it there is still queued, and reporting
    /// it created would put one item in the replay twice. Found in one walk of the model, only
    /// for early batches: the queue stayed busy for half a second of reading, or more creations
    /// than the buffer limit came without a pause (with the default limit, 65,536, a walk per
    /// 65,536 creations at most).
    ///
    /// A file with more than one link is not counted: a new hard link does hold a known item.
    /// Nor is a directory when symlinks are followed (one directory may stand at several
    /// paths). A creation deferred for ``maximumDeferralNanoseconds`` is reported as found.
    private func renamedOntoLater(_ creations: [PendingCreation], _ examined: [Examination], now: UInt64) -> Set<Int> {
        var wanted: [FileIdentity: [Int]] = [:]
        for (index, examination) in examined.enumerated() {
            guard case .found(let status, let type, let identity) = examination else { continue }
            let creation = creations[index]
            guard type == .directory ? !options.followsSymlinks : status.linkCount <= 1,
                  creation.deferredSince == 0 || now &- creation.deferredSince < Self.maximumDeferralNanoseconds,
                  creation.directory.children[creation.name]?.inode != identity.inode
            else { continue }
            wanted[identity, default: []].append(index)
        }
        guard !wanted.isEmpty else { return [] }
        var deferred: Set<Int> = []
        for tree in roots.compactMap(\.tree) {
            tree.forEachDirectory { node in
                for (name, entry) in node.children {
                    let identity = FileIdentity(device: entry.directory?.device ?? node.device, inode: entry.inode)
                    guard let indices = wanted[identity] else { continue }
                    for index in indices where !(creations[index].directory === node && creations[index].name.elementsEqual(name)) {
                        deferred.insert(index)
                    }
                }
            }
        }
        return deferred
    }

    /// - Parameter provisional: the batch was examined with events still queued; the name is
    ///   noted in ``provisionalNames``.
    /// - Returns: ``CreationOutcome/waits`` when the creation is to be examined again with
    ///   the next batch (its directory is not where the model says, and events still queued
    ///   may say why).
    @discardableResult
    private mutating func apply(_ creation: PendingCreation, _ examination: Examination, quiet: Bool, provisional: Bool) -> CreationOutcome {
        let directory = creation.directory
        let name = creation.name
        // A crawl or an eviction earlier in the batch may have taken the directory out.
        guard directory.isAttached, !roots[directory.root].isRemoved else { return .done }
        let status: FileStatus, identity: FileIdentity
        var type: FileItemType
        switch examination {
        case .gone:
            // Written through and gone when examined: if a rename still queued took it, the
            // write goes with it when that rename is read (``writtenNamesFoundGone``).
            if !changesWhilePending.isEmpty {
                // Kept where they are too: a removal of the name read later looks there.
                let written = NameInModel(directory, name)
                let changes = Set([FileSystemEvent.Kind.modified, .attributesChanged].filter { changesWhilePending.contains($0, for: written) })
                if !changes.isEmpty {
                    if writtenNamesFoundGone.count >= Self.writtenNamesFoundGoneLimit { writtenNamesFoundGone.removeFirst() }
                    writtenNamesFoundGone.append((written, changes))
                }
            }
            return .done
        case .ignored, .filteredOut(linkedFile: nil):
            return .done
        case .filteredOut(linkedFile: let identity?):
            // Another name of a file in view, perhaps, out of view here.
            watchNamesInView(of: identity)
            return .done
        case .stale:
            // A rescan while events are queued would see changes those events then repeat:
            // only with the queue still empty (applying the batch takes time).
            if quiet && kernel?.hasPendingEvents() != true {
                rescanNearestResolvable(directory)
                return .done
            }
            return .waits
        case .inaccessible(let errno) where FileSystemEventsError.isDescriptorShortage(errno):
            let path = roots[directory.root].paths.bytes(directory.relativePath)
            pendingFailure = pendingFailure ?? .systemCallFailed(call: "open", path: FilePath(bytes: path), errno: errno)
            return .done
        case .inaccessible(let errno):
            // A check of a name the model accounts for: no phantom to record (after `mv e
            // keep` onto a known `keep`, where the watcher may not look, the check of `e`
            // put a phantom `e` in the model). But the check was the only way to tell a move
            // onto the name and a move back from an exchange read apart, which the model took
            // as the former: the `chmod` that lets the watcher look has the directory listed
            // again, and the difference told.
            if creation.isCheck {
                reportInaccessible(directory, errno: errno, keepingListing: true)
            } else {
                recordUnexamined(creation, errno: errno)
            }
            return .done
        case .found(let found, let foundType, let foundIdentity):
            (status, type, identity) = (found, foundType, foundIdentity)
        }
        let root = directory.root
        let path = relativePath(of: directory).appendingComponent(name)
        defer { if let madeAt = creation.madeAt { noteMadeAt(madeAt, ofCreationAt: path, root: root) } }
        if let existing = directory.children[name] {
            // Already in the model: listed by a crawl after the kernel queued its creation,
            // or put there by a rename read after it. Or a new file with the inode number of
            // the one a move replaced: told `created`, so that the consumer reads it again (a
            // crawl that listed it after the move makes that a repeat, harmless to a replay).
            if existing.inode == identity.inode && existing.type == type {
                if type == .file && creation.replacedInode == identity.inode {
                    produced.append(makeEvent(.created, root: root, relative: path, type: type, identity: identity, synthetic: false))
                } else if !changesWhilePending.isEmpty {
                    // Changes heard at the name while it waited were kept for this
                    // examination (``reportChange(_:named:in:)``); the name holds the model's
                    // item, so they are told of it now. Dropped, a write that came after a
                    // known item moved onto the name was never told; a change of the item
                    // that was there before is a repeat, which costs a consumer a re-read.
                    // (Told outside any event's dispatch: what they leave as the last change
                    // reported must not make the next event, heard by the file's own watch,
                    // look like this one's repeat.)
                    let kept = changesWhilePending.take(for: NameInModel(directory, name))
                    let reportedBefore = lastReportedChange
                    for kind in [FileSystemEvent.Kind.modified, .attributesChanged] where kept.contains(kind) {
                        reportChange(kind, named: name, in: directory)
                    }
                    lastReportedChange = reportedBefore
                }
                // Found early, the model's item is confirmed by the disk as it is after events
                // still queued, not as it was when they happened: `mkdir b; exchange a b;
                // exchange a b` read in two batches, the first exchange unconfirmed (told as
                // `mv a b; mv b a`) leaves A at `a`, where the disk has it again, yet the
                // second exchange, still queued, moves the item at `a` (B, by then) to `b`.
                // Swapped as known items, A would end up at `b`.
                if provisional { provisionalNames.insert(NameInModel(directory, name)) }
                return .done
            }
            if let child = existing.directory { unwatch(child) }
            hardLinks.remove(self.identity(of: existing, in: directory), directory, name)
            dropFileLink(name, in: directory)
        }
        if type == .file && status.itemType == .symlink
            && !followFileLink(name, in: directory, linkInode: identity.inode)
        {
            type = .symlink  // no file behind it by now
        }
        var entry = WatchedEntry(type: type, inode: identity.inode)
        produced.append(makeEvent(.created, root: root, relative: path, type: type, identity: identity, synthetic: false))
        if provisional { provisionalNames.insert(NameInModel(directory, name)) }
        if creation.isMoveIn {
            if arrivals.count >= Self.arrivalLimit { arrivals.removeAll() }
            arrivals[NameInModel(directory, name)] = identity.inode
        }
        // A new name of a symlink or a FIFO (`link(2)` does not follow a symlink) is a hard
        // link as a file's is: indexed, a `lutimes` through either name is told at both. It gets
        // no watch of its own for a name out of view (a candidate is checked for that as a
        // regular file only), but what was changed through the new name while it waited is
        // told at its other names.
        if type != .directory && status.linkCount > 1 {
            hardLinks.add(identity, directory, name)
            let changes = changesWhilePending.take(for: NameInModel(directory, name))
            if status.itemType == .file || (status.itemType == type && !changes.isEmpty) {
                hardLinkCandidates.append(HardLinkCandidate(directory: directory, name: name, inode: identity.inode, changesThroughNewName: changes))
            }
        }
        if type == .directory && options.isRecursive && options.filter.descends(intoDirectoryAt: path) {
            let child = WatchedDirectory(parent: directory, name: name, root: root, device: identity.device, inode: identity.inode)
            // A symlink followed to a directory: the parent's watch hears of the link only.
            child.hearsOwnAttributes = status.itemType == .symlink
            entry.directory = child
            directory.children[name] = entry
            crawl(child, emitting: true)
        } else {
            directory.children[name] = entry
        }
        return .done
    }

    /// What became of a creation given to ``apply(_:_:quiet:provisional:)``.
    enum CreationOutcome {
        /// Applied, or found to need no event.
        case done
        /// To be examined again with the next batch.
        case waits
    }

    /// A write to a file, the close of its writer, or a file moved in from outside the tree,
    /// for the settle tracker, in kernel order.
    ///
    /// A writer works on an inode, not on a name: while it is at work through one name, the
    /// file is being written at every name the consumer knows it by, which are told
    /// `modified` too (``reportChange(_:named:in:)``, ``handleHardLinkedFile(_:_:)``). Noted at
    /// the name the kernel gave alone, the other names had a `modified` with no writer at work
    /// behind it and were settled a quiet period later, while the writer still held the file
    /// open (a file with two names in the tree, or one outside it, written with pauses).
    mutating func noteWriteActivity(_ event: Inotify.Event) {
        guard settle != nil, !event.mask.contains(.isDirectory), let target = targets[event.watch] else { return }
        var paths: [[UInt8]] = []
        if event.name.isEmpty {
            // The watch of a file itself (``fileLinkMask``): a name of it out of view was
            // written through, or the file a followed symlink leads to.
            guard !event.mask.contains(.movedTo) else { return }
            for link in target.fileLinks where link.isLive {
                paths.append(roots[link.directory.root].paths.bytes(link.directory.relativePath.appendingComponent(link.name)))
            }
        }
        for index in target.fileRoots where !roots[index].isRemoved && !event.name.isEmpty {
            if case .file(let file) = roots[index].kind, let role = file.role(of: event), role == .name || role == .target {
                paths.append(roots[index].bytes)
            }
        }
        for directory in target.directories where directory.isAttached && !event.name.isEmpty {
            // Every name in view of the inode, for a write or a close; an arrival from outside
            // is an arrival at its own name only. A name whose entry is the item a move onto
            // it replaced is not this file's (``replacedNames``).
            if !event.mask.contains(.movedTo) && !hardLinks.isEmpty,
               replacedNames.isEmpty || replacedNames[NameInModel(directory, event.name)] == nil,
               let entry = directory.children[event.name], entry.type == .file, entry.inode != 0
            {
                for (linkDirectory, linkName) in hardLinks.paths(of: identity(of: entry, in: directory), at: directory, event.name) {
                    paths.append(roots[linkDirectory.root].paths.bytes(linkDirectory.relativePath.appendingComponent(linkName)))
                }
                continue
            }
            paths.append(roots[directory.root].paths.bytes(directory.relativePath.appendingComponent(event.name)))
        }
        let now = MonotonicClock.nanoseconds()
        for path in paths {
            if event.mask.contains(.closeWrite) {
                settle!.closedAfterWriting(path, now: now)
            } else if event.mask.contains(.movedTo) {
                settle!.movedIn(path, now: now)
            } else {
                settle!.wrote(path, now: now)
            }
        }
    }

    /// A name created in a directory the watcher may not look into (it was made unreadable
    /// while watched). The kernel's word is all there is: reported with the type it gave
    /// (`unknown` for anything but a directory), and the directory is marked incomplete, to
    /// be rescanned when a `chmod` makes it readable.
    ///
    /// A name removed or moved away after its creation was queued is not recorded: the refusal
    /// cannot say it is gone, and the event that took it away has been applied already (a move
    /// out was told as an arrival where it went, examined there).
    private mutating func recordUnexamined(_ creation: PendingCreation, errno: Errno) {
        let directory = creation.directory
        if let existing = directory.children[creation.name] {
            // An item the model has never looked at either, moved here from where the watcher
            // could not look (``handleRename(from:to:sourceDirectory:destinationDirectory:)``
            // examines it where it arrived): nothing else will tell what it is. The directory
            // is listed again once it may be, as one whose names could not be confirmed is.
            // Left as it was, `echo x > D/f; mv D/f S/b/c; chmod 700 S/b` (root, the watcher
            // `nobody`) kept `S/b/c` typed `unknown` for good, `S/b` made searchable again
            // (inotify and inotifytools, 2 to 7 runs in 100 of a race hunt).
            if existing.inode == 0 && existing.type != .directory { reportInaccessible(directory, errno: errno, keepingListing: true) }
            return
        }
        if let left = namesLeftWhilePending[NameInModel(directory, creation.name)], left >= creation.sequence { return }
        // Written through before it was looked at: see ``reportChange(_:named:in:)``.
        if !changesWhilePending.isEmpty && changesWhilePending.contains(.modified, for: NameInModel(directory, creation.name)) {
            noteFilesWritten(since: changesWhilePendingSince)
        }
        let type: FileItemType = creation.isDirectory ? .directory : .unknown
        var entry = WatchedEntry(type: type, inode: 0)
        if creation.isDirectory && options.isRecursive {
            let child = WatchedDirectory(parent: directory, name: creation.name, root: directory.root)
            entry.directory = child
        }
        directory.children[creation.name] = entry
        let path = directory.relativePath.appendingComponent(creation.name)
        produced.append(makeEvent(.created, root: directory.root, relative: path, type: type, identity: nil, synthetic: false))
        reportInaccessible(directory, errno: errno)
    }

    private func isAncestor(_ identity: FileIdentity, of directory: WatchedDirectory) -> Bool {
        var node: WatchedDirectory? = directory
        while let current = node {
            if current.device == identity.device && current.inode == identity.inode { return true }
            node = current.parent
        }
        // The directories above the root are on its path too.
        return roots[directory.root].identitiesAbove.contains(identity)
    }

    mutating func handleRename(from source: Inotify.Event, to destination: Inotify.Event) {
        for index in targets[source.watch]?.fileRoots ?? [] { handleFileRoot(index, source) }
        for index in targets[destination.watch]?.fileRoots ?? [] { handleFileRoot(index, destination) }
        guard standsAtSeveralPlaces(source.watch) || standsAtSeveralPlaces(destination.watch) else {
            handleRename(from: source, to: destination,
                         sourceDirectory: liveDirectory(source.watch), destinationDirectory: liveDirectory(destination.watch))
            return
        }
        // The kernel has one watch per directory, and the model holds this one at several
        // places: a root named both by its path and through a symlink (`watch d link-to-d`),
        // or a bind mount inside the tree. The rename happened at each: within one directory
        // at each of its places, and between two at each pair of places in one root that are
        // the same directory's (their paths share the most). Applied at the first place only,
        // `watch d link-to-d; mv d/a d/b` told `renamed d/b` and left `link-to-d/a`.
        var unpaired = liveDirectories(destination.watch)
        for sourceDirectory in liveDirectories(source.watch) {
            let paired = unpaired.firstIndex { $0 === sourceDirectory } ?? unpaired.indices
                .filter { unpaired[$0].root == sourceDirectory.root }
                .max { Self.sharedLength(unpaired[$0].relativePath, sourceDirectory.relativePath)
                        < Self.sharedLength(unpaired[$1].relativePath, sourceDirectory.relativePath) }
            let destinationDirectory = paired.map { unpaired.remove(at: $0) }
            handleRename(from: source, to: destination, sourceDirectory: sourceDirectory, destinationDirectory: destinationDirectory)
        }
        for destinationDirectory in unpaired {
            handleRename(from: source, to: destination, sourceDirectory: nil, destinationDirectory: destinationDirectory)
        }
    }

    /// How many leading bytes two relative paths share.
    private static func sharedLength(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).prefix { $0 == $1 }.count
    }

    /// The nodes of the model that `watch` stands for now: one, unless the same directory
    /// stands at several places (see ``handleRename(from:to:)``).
    func liveDirectories(_ watch: CInt) -> [WatchedDirectory] {
        targets[watch]?.directories.filter { $0.isAttached } ?? []
    }

    /// Whether the model holds `watch`'s directory at more than one place; allocates nothing,
    /// for the moves of a burst, where it never does.
    func standsAtSeveralPlaces(_ watch: CInt) -> Bool {
        guard let directories = targets[watch]?.directories, directories.hasSeveral else { return false }
        var attached = 0
        for directory in directories where directory.isAttached {
            attached += 1
            if attached > 1 { return true }
        }
        return false
    }

    /// A rename seen at one place of the model: from `source.name` in `sourceDirectory` to
    /// `destination.name` in `destinationDirectory` (`nil`: that side is not in view there).
    private mutating func handleRename(
        from source: Inotify.Event, to destination: Inotify.Event,
        sourceDirectory: WatchedDirectory?, destinationDirectory: WatchedDirectory?
    ) {
        guard let sourceDirectory, let entry = sourceDirectory.children[source.name] else {
            // Moved from somewhere we do not know (outside, excluded, or never seen): a move in.
            if let sourceDirectory { noteNameLeftWhilePending(source.name, in: sourceDirectory) }
            examineArrival(destination, in: destinationDirectory, from: source, in: sourceDirectory)
            return
        }
        if !replacedNames.isEmpty, let replaced = replacedNames[NameInModel(sourceDirectory, source.name)], replaced == entry.inode {
            // Something the model does not know yet was moved onto this name after its item
            // (an atomic save whose temporary file came and went unexamined), and this is that
            // new item leaving: moved as the model's, the old file's identity went with it to
            // the new name (`save target; mv target other`: `renamed other` with the replaced
            // file's inode, and the saved file never told). The model's item is gone from here
            // (`removed`, as the save's replacement took it); the item that moved is examined
            // where it arrived. The save's own creation, still waiting, finds the name as it is.
            replacedNames[NameInModel(sourceDirectory, source.name)] = nil
            removeItemMovedAway(named: source.name, in: sourceDirectory)
            examineArrival(destination, in: destinationDirectory, from: source, in: sourceDirectory)
            return
        }
        guard let destinationDirectory, destinationDirectory.root == sourceDirectory.root,
              provisionalNames.isEmpty || provisionalNames.remove(NameInModel(sourceDirectory, source.name)) == nil
        else {
            // Moved across roots, or a provisional item (which may not be the one that moved):
            // a removal here and a creation there, examined where it arrived. (The file roots
            // that watch either name were handled above.)
            removeItemMovedAway(named: source.name, in: sourceDirectory)
            examineArrival(destination, in: destinationDirectory, from: source, in: sourceDirectory)
            return
        }
        if let moved = entry.directory, destinationDirectory.isInside(moved) {
            // The kernel cannot move a directory below itself; the model is wrong about where
            // something is. Never build a cycle: rebuild the model from the disk.
            requestReconcile(afterOverflow: false)
            return
        }
        let newPath = destinationDirectory.relativePath.appendingComponent(destination.name)
        guard options.filter.admits(relativePath: newPath, name: destination.name, isDirectory: entry.type == .directory) else {
            removeItemMovedAway(named: source.name, in: sourceDirectory)
            return
        }
        if isAlreadyApplied(renameOf: entry, named: source.name, in: sourceDirectory, to: destination.name, in: destinationDirectory) {
            return
        }
        let oldPath = sourceDirectory.relativePath.appendingComponent(source.name)
        let id = identity(of: entry, in: sourceDirectory)
        sourceDirectory.children[source.name] = nil
        let replaced = destinationDirectory.children[destination.name]
        if let replaced {
            if let child = replaced.directory { unwatch(child) }
            hardLinks.remove(identity(of: replaced, in: destinationDirectory), destinationDirectory, destination.name)
            dropFileLink(destination.name, in: destinationDirectory)
        }
        destinationDirectory.children[destination.name] = entry
        // What the destination holds is now an item the model knows, no longer one examined early,
        // nor one a move from elsewhere put over the model's (``replacedNames``): the events
        // read after this one are about it. Left marked, a write after the rename was kept for
        // the arrival's examination, which found this item and had nothing to tell (`mv
        // ../x build; mv file1 build; echo >> build`: never told modified; scenario 110 beside
        // the rest of the suite, about one burst in 10,000).
        if !provisionalNames.isEmpty { provisionalNames.remove(NameInModel(destinationDirectory, destination.name)) }
        if !replacedNames.isEmpty { replacedNames[NameInModel(destinationDirectory, destination.name)] = nil }
        if let child = entry.directory {
            child.parent = destinationDirectory
            child.name = destination.name
        }
        hardLinks.move(id, from: sourceDirectory, source.name, to: destinationDirectory, destination.name)
        moveFileLink(source.name, in: sourceDirectory, to: destination.name, in: destinationDirectory)
        produced.append(
            makeEvent(.renamed, root: sourceDirectory.root, relative: newPath, previous: oldPath, type: entry.type, identity: id, synthetic: false)
        )
        // A relative link may lead elsewhere from its new directory: looked at after the
        // rename is told, so what it says applies to the new path.
        if sourceDirectory !== destinationDirectory { relookMovedFileLink(destination.name, in: destinationDirectory) }
        // An item the watcher could not look at where it was made (a directory it may not
        // search, ``recordUnexamined(_:errno:)``): its type, identity and contents were never
        // known, and may be where it arrived. Examined there: `created` with what it is, and a
        // directory's contents (a file moved out of such a directory kept the type `unknown`,
        // and a directory arrived empty).
        if entry.inode == 0 && sourceDirectory !== destinationDirectory {
            handleCreation(named: destination.name, in: destinationDirectory, isDirectoryHint: entry.type == .directory)
        }
        // A rename onto an item the model has replaced it, or it was the first half of an
        // exchange that was not told as one (its two pairs read apart, past the wait for the
        // mirror): the second half then moves the item back, and the one it replaced is gone
        // from the model while the disk has it at the first name (a directory and its subtree,
        // found by a race hunt on libinotifytools with a queue of 32 events, 2 runs in 30).
        // Both names are examined once the queue is read, as an exchange's are: after a plain
        // replacement each holds what the model says, and nothing is reported.
        if let replaced {
            handleCreation(named: source.name, in: sourceDirectory, isDirectoryHint: replaced.type == .directory, isCheck: true)
            handleCreation(named: destination.name, in: destinationDirectory, isDirectoryHint: entry.type == .directory, isCheck: true)
        }
        // What lies below a moved directory is filtered anew where the filter looks at paths.
        if entry.type == .directory && options.isRecursive && mustRefilter(entry, movedFrom: oldPath, to: newPath) {
            refilterMovedDirectory(named: destination.name, in: destinationDirectory, path: newPath)
        }
        // Directories below it that the watcher could not read or look into where they were
        // (a parent it may not search) are looked at where they are now: `mv S/d o` with `S`
        // mode 0 left `o/a` unknown and `o/sub` empty. (An item never examined is examined
        // where it arrived, above, and a directory crawled anew there.)
        if mayHoldUnexamined, entry.inode != 0, let moved = destinationDirectory.children[destination.name]?.directory {
            for node in unlistedDirectories(within: moved) { rescanBecomingReadable(node) }
        }
    }

    /// The directories of `directory`'s subtree (itself included) that are not listed, the
    /// highest of each branch only (a rescan of one covers what is below it); none unless
    /// ``mayHoldUnexamined``.
    func unlistedDirectories(within directory: WatchedDirectory) -> [WatchedDirectory] {
        guard mayHoldUnexamined else { return [] }
        var found: [WatchedDirectory] = []
        func collect(_ node: WatchedDirectory) {
            guard node.isListed && !node.isKeptWhileUnreadable else {
                found.append(node)
                return
            }
            for entry in node.children.values { if let child = entry.directory { collect(child) } }
        }
        collect(directory)
        return found
    }

    /// Whether a directory moved from `oldPath` to `newPath` is filtered anew: the filter may
    /// say otherwise at the new path, or the model never listed the directory while the new
    /// path is within the limit. The second happens when the directory was renamed again before
    /// its parent's own re-filtering (which waits for the queue to be read, and then no longer
    /// finds it there): `mv a/b a2` brought `a2/c` within a depth limit, `mv a2/c d/e` took it
    /// to the same depth elsewhere, and `d/e`'s contents were never listed (scenario 113 at
    /// offset 1029000, seed 1030501).
    private func mustRefilter(_ entry: WatchedEntry, movedFrom oldPath: [UInt8], to newPath: [UInt8]) -> Bool {
        options.filter.mayFilterOtherwise(movedFrom: oldPath, to: newPath)
            || (entry.directory == nil && options.filter.descends(intoDirectoryAt: newPath))
    }

    /// A directory moved under a filter that leaves directories out (by depth or by path)
    /// holds what the filter admits at its new path: contents now too deep are reported
    /// removed (`mv m a/b/m` under `--depth 2` takes `m/n` below the limit), and a directory
    /// that was at the limit, and so never listed, is listed and watched once it is above it
    /// (`mv a/lim up` under `--depth 1`). A consumer's tree stays the filtered tree.
    private mutating func refilterMovedDirectory(named name: [UInt8], in parent: WatchedDirectory, path: [UInt8]) {
        guard var entry = parent.children[name], entry.type == .directory else { return }
        let descends = options.filter.descends(intoDirectoryAt: path)
        if let child = entry.directory {
            if descends {
                // Deeper directories may have come within the limit, or gone beyond it, or
                // under an exclusion by path: the crawl applies the filter at the new paths.
                // Moved on since (a rename still queued), or unreadable now: looked at again
                // where it is once the queue has been read. What the model has that the filter
                // leaves out at the new paths goes at once, from the model alone: kept until
                // that look, a write to it was told as `modified` at a path the filter excludes
                // (`mv a z; echo >> z/s/y` under `--include 'a/**'`), and its `removed` came
                // only at the next rename.
                pruneItemsNoLongerAdmitted(in: child, at: path)
                if rescan(child, changedSince: nil) != .rescanned, !pendingRefilters.contains(where: { $0 === child }) {
                    pendingRefilters.append(child)
                }
            } else {
                let base = PathBuilder(root: roots[parent.root].paths.path(path))
                produced.append(contentsOf: SnapshotDiff.events(from: child.snapshot(), to: SnapshotDirectory(parent: nil, name: []),
                                                                root: base, pairsMovedItems: false))
                unwatch(child)
                entry.directory = nil
                parent.children[name] = entry
            }
        } else if descends {
            let node = WatchedDirectory(parent: parent, name: name, root: parent.root,
                                        device: identity(of: entry, in: parent)?.device ?? parent.device, inode: entry.inode)
            entry.directory = node
            parent.children[name] = entry
            crawl(node, emitting: true)
        }
    }

    /// The item a rename brought to `destination` is not the model's item from `source` (or
    /// the model has none): examined where it arrived, as a move in, with the settle tracker's
    /// knowledge of its writer carried along.
    private mutating func examineArrival(_ destination: Inotify.Event, in destinationDirectory: WatchedDirectory?,
                                         from source: Inotify.Event, in sourceDirectory: WatchedDirectory?) {
        guard let destinationDirectory else { return }
        carrySettleSession(from: source, in: sourceDirectory, to: destination, in: destinationDirectory)
        if let sourceDirectory {
            // Written through while its creation waited, then renamed (`ln a b; echo >> b; mv b
            // c`): the write goes with the name, so that `c`'s examination, which finds the new
            // hard link, tells the file's other names changed (otherwise `a` never was). Also
            // when `b` was examined, and found gone, before this rename was read.
            let sourceName = NameInModel(sourceDirectory, source.name)
            var carried = changesWhilePending.isEmpty ? [] : changesWhilePending.take(for: sourceName)
            if !writtenNamesFoundGone.isEmpty, let index = writtenNamesFoundGone.lastIndex(where: { $0.name == sourceName }) {
                carried.formUnion(writtenNamesFoundGone.remove(at: index).changes)
            }
            if !carried.isEmpty && changesWhilePending.isEmpty {
                changesWhilePendingSince = drainedBeforeRead - Self.changeTimeMarginNanoseconds
            }
            for kind in carried { changesWhilePending.record(kind, for: NameInModel(destinationDirectory, destination.name)) }
        }
        let waiting = pendingCreations.count
        handleCreation(named: destination.name, in: destinationDirectory, isDirectoryHint: destination.mask.contains(.isDirectory),
                       replacing: true)
        if pendingCreations.count > waiting, let madeAt = madeAt(of: source.name, in: sourceDirectory) {
            pendingCreations[pendingCreations.count - 1].madeAt = madeAt
            madeAtCount += 1
        }
    }

    /// An event about `name` read after a move onto it whose creation still waits: whatever
    /// the name holds when examined may not be what moved there (`mv app.log b; rm b; echo >
    /// b`), so it is not told as made at the move's source. A move away from the name is not
    /// such an event: what leaves is what arrived, and its next arrival takes `madeAt` along.
    private mutating func forgetMadeAt(named name: [UInt8], watch: CInt) {
        madeAtCount -= Self.forgetMadeAt(named: name, watch: watch, in: &pendingCreations)
        madeAtCount -= Self.forgetMadeAt(named: name, watch: watch, in: &deferredCreations)
    }

    /// Drops the ``PendingCreation/madeAt`` of the latest of `creations` at `name`; how many.
    private static func forgetMadeAt(named name: [UInt8], watch: CInt, in creations: inout [PendingCreation]) -> Int {
        var forgotten = 0
        for index in creations.indices.suffix(madeAtSearchLimit)
        where creations[index].madeAt != nil && creations[index].directory.watch == watch && creations[index].name.elementsEqual(name) {
            creations[index].madeAt = nil
            forgotten += 1
        }
        return forgotten
    }

    /// Where the item moved away from `name` was made, if it was never told there: the name's
    /// own creation (or arrival) still waits to be examined. Only the latest creations are
    /// looked at, newest first: a rotated log's was queued just before its rename, and a
    /// burst of a hundred thousand waiting creations is not searched on every rename.
    private func madeAt(of name: [UInt8], in directory: WatchedDirectory?) -> (directory: WatchedDirectory, name: [UInt8])? {
        guard let directory, directory.children[name] == nil else { return nil }
        for queue in [pendingCreations, deferredCreations] {
            for creation in queue.suffix(Self.madeAtSearchLimit).reversed()
            where creation.directory === directory && creation.name.elementsEqual(name) {
                return creation.madeAt ?? (directory, name)
            }
        }
        return nil
    }

    /// How many of the latest waiting creations ``madeAt(of:in:)`` looks through.
    static var madeAtSearchLimit: Int { 256 }

    /// Sets ``FileSystemEvent/madeAt`` on the `created` event just produced for `path`, if
    /// there is one (a creation found already in the model produces none).
    private mutating func noteMadeAt(_ madeAt: (directory: WatchedDirectory, name: [UInt8]), ofCreationAt path: [UInt8], root: Int) {
        guard let last = produced.indices.last, produced[last].kind == .created,
              madeAt.directory.isAttached, madeAt.directory.root == root
        else { return }
        let paths = roots[root].paths
        guard produced[last].path == paths.path(path) else { return }
        produced[last].madeAt = paths.path(madeAt.directory.relativePath.appendingComponent(madeAt.name))
    }

    /// A file renamed before it was reported under its old name (or across roots) is reported
    /// `created` at the new one: the settle tracker's knowledge of its writer follows it there
    /// (``SettleTracker/renamedBeforeReported(from:to:now:)``).
    private mutating func carrySettleSession(from source: Inotify.Event, in sourceDirectory: WatchedDirectory?,
                                             to destination: Inotify.Event, in destinationDirectory: WatchedDirectory) {
        guard settle != nil, !destination.mask.contains(.isDirectory), let sourceDirectory, sourceDirectory.isAttached,
              destinationDirectory.isAttached else { return }
        let from = roots[sourceDirectory.root].paths.bytes(sourceDirectory.relativePath.appendingComponent(source.name))
        let to = roots[destinationDirectory.root].paths.bytes(destinationDirectory.relativePath.appendingComponent(destination.name))
        settle!.renamedBeforeReported(from: from, to: to, now: MonotonicClock.nanoseconds())
    }

    /// Whether a rescan has already put the result of this rename into the model: it looked at
    /// the disk while the rename was still queued (a rescan cannot stop the world). Then the
    /// model holds, at the destination, the item the disk holds there, and the source entry is
    /// something else that has taken the old name since (`mv a b; mkdir a`). Applying the
    /// rename again would move that newcomer over the real `b`. Costs a `stat` only when the
    /// model already has an entry at the destination.
    /// Both names are checked on disk, so a model that is merely behind (a later event put
    /// the old destination back) is never mistaken for one that is ahead.
    private func isAlreadyApplied(renameOf entry: WatchedEntry, named sourceName: [UInt8], in sourceDirectory: WatchedDirectory,
                                  to name: [UInt8], in directory: WatchedDirectory) -> Bool {
        guard let existing = directory.children[name], existing.inode != 0, entry.inode != 0, existing.inode != entry.inode else {
            return false
        }
        return holdsOnDisk(existing, named: name, in: directory) && holdsOnDisk(entry, named: sourceName, in: sourceDirectory)
    }

    /// Whether `name` in `directory` holds the model's `entry` on disk now (its inode, on its device).
    private func holdsOnDisk(_ entry: WatchedEntry, named name: [UInt8], in directory: WatchedDirectory) -> Bool {
        let absolute = roots[directory.root].paths.bytes(directory.relativePath.appendingComponent(name))
        guard case .success(let onDisk) = Syscalls.status(atPath: absolute) else { return false }
        return onDisk.inode == entry.inode && onDisk.device == identity(of: entry, in: directory)?.device
    }

    /// `renameat2(RENAME_EXCHANGE)` of the items named by `first` and `second`. Confirmed on
    /// disk before the model swaps them: the same four events also come from a rename over an
    /// item followed at once by a rename back, told as those two renames when the disk does not
    /// confirm it (``unconfirmedExchange(_:_:_:_:_:)``). Returns `false` when the four events
    /// are not to be taken together: the caller tells the first pair and reads on from the
    /// mirror.
    private mutating func handleExchange(_ first: Inotify.Event, _ second: Inotify.Event,
                                         mirror: (from: Inotify.Event, to: Inotify.Event)) -> Bool {
        guard targets[first.watch]?.fileRoots.isEmpty ?? true, targets[second.watch]?.fileRoots.isEmpty ?? true,
              let sourceDirectory = liveDirectory(first.watch),
              let destinationDirectory = liveDirectory(second.watch),
              sourceDirectory.root == destinationDirectory.root
        else { return false }
        if standsAtSeveralPlaces(first.watch) || standsAtSeveralPlaces(second.watch) {
            // A directory that stands at several places of the model (see
            // ``handleRename(from:to:)``): the model is rebuilt from the disk, which tells the
            // swap at every place. Told as two renames it would undo itself.
            requestReconcile(afterOverflow: false)
            return true
        }
        let knownA = sourceDirectory.children[first.name]
        let knownB = destinationDirectory.children[second.name]
        guard let a = knownA, let b = knownB else {
            return exchangeWithNameNotYetKnown((first, second), mirror, a: knownA, b: knownB, sourceDirectory, destinationDirectory)
        }
        if a.inode != 0 && a.inode == b.inode {
            // The kernel does nothing (and queues nothing) when both names hold one item, so
            // the model is wrong about one of them: a rescan listed a name after this exchange
            // had changed it (`exchange a/q c/i` seen from `a`'s rescan: the file from `c/i`
            // at both names). Which item the other name held, and where a later rename still
            // queued takes it, the model cannot know (a race hunt: scenario 110 through a
            // shared watcher under a depth limit lost the directory swapped out of `a/q`, and a
            // later `mv c/i a/lim` carried the file's entry to `a/lim`, where the disk had that
            // directory). So the model is rebuilt from the disk once the queue is read, as for
            // an exchange the disk does not confirm.
            requestReconcile(afterOverflow: false)
        }
        // The same four events come from `mv a b` (replacing b) then `mv b a`, which destroys
        // b. An exchange keeps both: right after it a stands at b's name; events still queued
        // may have moved them on since (more exchanges, say), but b's inode still stands at
        // one of the two names unless b was destroyed. So: an exchange if a is at b's name,
        // or b is at either name.
        let atB = try? statusOfChild(second.name, in: destinationDirectory).get()
        if atB?.inode != a.inode && atB?.inode != b.inode {
            guard (try? statusOfChild(first.name, in: sourceDirectory).get())?.inode == b.inode else {
                unconfirmedExchange(first, second, mirror, sourceDirectory, destinationDirectory)
                return true
            }
        }
        if let aDirectory = a.directory, destinationDirectory.isInside(aDirectory) { return false }
        if let bDirectory = b.directory, sourceDirectory.isInside(bDirectory) { return false }
        if !provisionalNames.isEmpty {
            let aProvisional = provisionalNames.remove(NameInModel(sourceDirectory, first.name)) != nil
            let bProvisional = provisionalNames.remove(NameInModel(destinationDirectory, second.name)) != nil
            if aProvisional || bProvisional {
                exchangeProvisional((first, second), mirror, aProvisional, bProvisional, destinationDirectory, sourceDirectory)
                return true
            }
        }
        let aPath = sourceDirectory.relativePath.appendingComponent(first.name)
        let bPath = destinationDirectory.relativePath.appendingComponent(second.name)
        let aIdentity = identity(of: a, in: sourceDirectory)
        let bIdentity = identity(of: b, in: destinationDirectory)
        sourceDirectory.children[first.name] = b
        destinationDirectory.children[second.name] = a
        if !replacedNames.isEmpty {
            // A name whose model item a move from elsewhere had replaced (``replacedNames``)
            // trades that mark too: the item that arrived there went with the swap, and events
            // at the name it left are about the known item that took its place.
            let markA = replacedNames.removeValue(forKey: NameInModel(sourceDirectory, first.name))
            let markB = replacedNames.removeValue(forKey: NameInModel(destinationDirectory, second.name))
            replacedNames[NameInModel(destinationDirectory, second.name)] = markA
            replacedNames[NameInModel(sourceDirectory, first.name)] = markB
            // The changes kept at a marked name are about its arrival (``reportChange``), so
            // they go where it went: the other name's examination finds it there, a new hard
            // link perhaps, whose other names must hear of a write made through it. Left
            // behind, they were told of the known item that took the name, and a write through
            // a link made outside and moved in was never told at the file's name in view.
            if (markA != nil || markB != nil) && !changesWhilePending.isEmpty {
                let keptA = changesWhilePending.take(for: NameInModel(sourceDirectory, first.name))
                let keptB = changesWhilePending.take(for: NameInModel(destinationDirectory, second.name))
                for kind in keptA { changesWhilePending.record(kind, for: NameInModel(destinationDirectory, second.name)) }
                for kind in keptB { changesWhilePending.record(kind, for: NameInModel(sourceDirectory, first.name)) }
            }
        }
        if let child = a.directory {
            child.parent = destinationDirectory
            child.name = second.name
        }
        if let child = b.directory {
            child.parent = sourceDirectory
            child.name = first.name
        }
        hardLinks.move(aIdentity, from: sourceDirectory, first.name, to: destinationDirectory, second.name)
        hardLinks.move(bIdentity, from: destinationDirectory, second.name, to: sourceDirectory, first.name)
        produced.append(
            makeEvent(.exchanged, root: sourceDirectory.root, relative: bPath, previous: aPath, type: a.type, identity: aIdentity, synthetic: false)
        )
        // After the exchange is told: a link that leads nowhere from its new place is reported
        // as the symlink it is at that place.
        exchangeFileLinks(first.name, in: sourceDirectory, with: second.name, in: destinationDirectory)
        // A side the filter refuses at its new name leaves the view there, as a rename onto a
        // refused name does: a directory `d` swapped with `f.txt` under `--include '*.txt'`
        // puts a file at `d`, which is no `*.txt` (it stayed in the consumer's tree, and its
        // writes were told; polling told it right).
        if !options.filter.admits(relativePath: bPath, name: second.name, isDirectory: a.type == .directory) {
            removeItemMovedAway(named: second.name, in: destinationDirectory)
        }
        if !options.filter.admits(relativePath: aPath, name: first.name, isDirectory: b.type == .directory) {
            removeItemMovedAway(named: first.name, in: sourceDirectory)
        }
        // The disk confirmed an exchange, not that the model had the right items on both
        // sides: a directory crawled while the exchange was still queued may have listed its
        // result already (`mkdir -p g/m/q; exchange g/m/q out`: the crawl found the file from
        // `out` at `q`, and the model then held that file at both names, the swap a no-op that
        // lost the directory now at `out`; found by a race hunt). Both names are examined once
        // the queue is read, as creations are: a name that holds another item than the model
        // says is reported `created`, replacing it; one that holds what the model says is not.
        handleCreation(named: first.name, in: sourceDirectory, isDirectoryHint: b.type == .directory)
        handleCreation(named: second.name, in: destinationDirectory, isDirectoryHint: a.type == .directory)
        // Each side moved: a directory among them holds what the filter admits at its new path.
        if options.isRecursive {
            if a.type == .directory && mustRefilter(a, movedFrom: aPath, to: bPath) {
                refilterMovedDirectory(named: second.name, in: destinationDirectory, path: bPath)
            }
            if b.type == .directory && mustRefilter(b, movedFrom: bPath, to: aPath) {
                refilterMovedDirectory(named: first.name, in: sourceDirectory, path: aPath)
            }
        }
        return true
    }

    /// An exchange of an item the model has with a name whose creation is still waiting to be
    /// examined (`echo > f; exchange d f` read in one go): the model has one side only. Taken
    /// for two renames, the second would carry the known item back where it came from. On disk
    /// the known item now stands at the other name, which confirms the exchange: it is told
    /// renamed there, and the name it left is examined like any creation. (Not confirmed,
    /// it was `mv a b; mv b a`, told as the two renames it was.)
    private mutating func exchangeWithNameNotYetKnown(_ pair: (from: Inotify.Event, to: Inotify.Event),
                                                      _ mirror: (from: Inotify.Event, to: Inotify.Event),
                                                      a: WatchedEntry?, b: WatchedEntry?,
                                                      _ sourceDirectory: WatchedDirectory, _ destinationDirectory: WatchedDirectory) -> Bool {
        // The known side's move and the directories it leaves and enters; the other pair moves
        // the unknown item into the name the known one left.
        let known: WatchedEntry, move: (from: Inotify.Event, to: Inotify.Event), unknownArrives: Inotify.Event
        let leaves: WatchedDirectory, enters: WatchedDirectory
        if let a {
            (known, move, unknownArrives, leaves, enters) = (a, pair, mirror.to, sourceDirectory, destinationDirectory)
        } else if let b {
            (known, move, unknownArrives, leaves, enters) = (b, mirror, pair.to, destinationDirectory, sourceDirectory)
        } else {
            return exchangeOfNamesNotYetKnown(pair, mirror, sourceDirectory, destinationDirectory)
        }
        guard case .success(let there) = statusOfChild(move.to.name, in: enters), there.inode == known.inode else {
            unconfirmedExchange(pair.from, pair.to, mirror, sourceDirectory, destinationDirectory)
            return true
        }
        if let directory = known.directory, enters.isInside(directory) { return false }
        // The changes heard at the unknown item's name while its creation waited are about it
        // (``reportChange``): they go where it went, whose examination may find a new hard link
        // whose other names must hear of them (`ln inner link; echo >> link; exchange link
        // other`). Left behind, they were told of the known item that took the name, and
        // `inner` was never told modified. Taken before the known item moves, so that what its
        // move carries (a marked name's own kept changes) stays apart.
        let unknownName = NameInModel(enters, move.to.name)
        let keptForUnknown = changesWhilePending.isEmpty ? [] : changesWhilePending.take(for: unknownName)
        let keptSince = changesWhilePendingSince
        defer {
            if !keptForUnknown.isEmpty {
                if changesWhilePending.isEmpty { changesWhilePendingSince = keptSince }
                for kind in keptForUnknown { changesWhilePending.record(kind, for: NameInModel(leaves, unknownArrives.name)) }
            }
        }
        let isProvisional = !provisionalNames.isEmpty && provisionalNames.remove(NameInModel(leaves, move.from.name)) != nil
        if isProvisional {
            // What the model has there may not be the item that moved: both names examined.
            handleMoveOut(move.from)
            handleCreation(named: move.to.name, in: enters, isDirectoryHint: move.to.mask.contains(.isDirectory))
        } else {
            handleRename(from: move.from, to: move.to)
        }
        handleCreation(named: unknownArrives.name, in: leaves, isDirectoryHint: unknownArrives.mask.contains(.isDirectory))
        return true
    }

    /// An exchange of two names whose creations both still wait (`ln inner link; echo >>
    /// link; echo > other; exchange link other`, read in one go): taken as the two renames it
    /// also is, each a move in examined where it arrived (returns `false`: the caller tells the
    /// first pair and reads on from the mirror). Except where changes were heard at either name
    /// while it waited (``changesWhilePending``): told as two renames, each carrying what was
    /// kept at its source, the second rename carried the first's back, and the written file's
    /// other names were never told. So then both pairs are taken here, with each name's kept
    /// changes sent to where its item went.
    private mutating func exchangeOfNamesNotYetKnown(_ pair: (from: Inotify.Event, to: Inotify.Event),
                                                     _ mirror: (from: Inotify.Event, to: Inotify.Event),
                                                     _ sourceDirectory: WatchedDirectory, _ destinationDirectory: WatchedDirectory) -> Bool {
        guard !changesWhilePending.isEmpty else { return false }
        let first = NameInModel(sourceDirectory, pair.from.name), second = NameInModel(destinationDirectory, pair.to.name)
        let keptSince = changesWhilePendingSince
        let keptAtFirst = changesWhilePending.take(for: first)
        let keptAtSecond = changesWhilePending.take(for: second)
        guard !keptAtFirst.isEmpty || !keptAtSecond.isEmpty else { return false }
        handleRename(from: pair.from, to: pair.to)
        handleRename(from: mirror.from, to: mirror.to)
        if changesWhilePending.isEmpty { changesWhilePendingSince = keptSince }
        for kind in keptAtFirst { changesWhilePending.record(kind, for: second) }
        for kind in keptAtSecond { changesWhilePending.record(kind, for: first) }
        return true
    }

    /// Four events that the disk does not confirm as an exchange are told as the two renames
    /// they may be (`mv a b; mv b a`). They may also be an exchange whose traces later changes
    /// wiped out: `mv --exchange new doc && rm new` leaves the old version at neither name,
    /// exactly as the two renames would have left it at `doc`, yet `doc` is another file now;
    /// so does a second exchange of the same two names still queued, which puts both back.
    /// So both names are examined once the queue is read, like creations: an item other than
    /// the one the model ends up with there is reported `created`, replacing it.
    ///
    /// Both pairs are told here, never the first alone: left to be read on, the mirror would
    /// be taken for the first half of the next pair of the same names, and two exchanges in a
    /// row (`a↔b`, `a↔b`: four pairs, each the mirror of the one before) would be split
    /// across the middle, the second exchange's first half taken for the first one's mirror and
    /// its own mirror then read as a plain rename, taking `b` out of the model.
    ///
    /// Examining the two names is not enough when the exchange was real and a later event
    /// still queued moved one of its items on before the disk was looked at (`exchange n d`
    /// of a file and a directory, then `exchange lim n`): told as two renames, the directory
    /// went out of the model and the file stayed at `n`, and the second exchange then carried
    /// that file to `lim`, a name nobody examines, where the disk has the directory and its
    /// subtree (found by a race hunt: about one run in fifteen of 60 random exchanges). The
    /// model cannot tell which it was, so it is rebuilt from the disk once the queue is read,
    /// as after a lost event: rare (only a race leaves an exchange unconfirmed), and right
    /// whatever happened.
    private mutating func unconfirmedExchange(_ first: Inotify.Event, _ second: Inotify.Event,
                                              _ mirror: (from: Inotify.Event, to: Inotify.Event),
                                              _ sourceDirectory: WatchedDirectory, _ destinationDirectory: WatchedDirectory) {
        handleCreation(named: first.name, in: sourceDirectory, isDirectoryHint: mirror.to.mask.contains(.isDirectory))
        handleCreation(named: second.name, in: destinationDirectory, isDirectoryHint: second.mask.contains(.isDirectory))
        handleRename(from: first, to: second)
        handleRename(from: mirror.from, to: mirror.to)
        requestReconcile(afterOverflow: false)
    }

    /// An exchange where one name or both were reported from an early batch
    /// (``provisionalNames``): what the model has there is what the name held when examined,
    /// possibly after this very exchange, so swapping it would report each item at the other's
    /// name. As for a rename of such a name, the model's item there is told removed and the
    /// other name is examined anew; an item the model knows for sure is told renamed.
    /// In replay order: removals first, then the renames, each creation examined with the
    /// pending batch.
    private mutating func exchangeProvisional(_ pair: (from: Inotify.Event, to: Inotify.Event),
                                              _ mirror: (from: Inotify.Event, to: Inotify.Event),
                                              _ aProvisional: Bool, _ bProvisional: Bool,
                                              _ destinationDirectory: WatchedDirectory, _ sourceDirectory: WatchedDirectory) {
        if aProvisional { handleMoveOut(pair.from) }
        if bProvisional { handleMoveOut(mirror.from) }
        if aProvisional {
            handleCreation(named: pair.to.name, in: destinationDirectory, isDirectoryHint: pair.to.mask.contains(.isDirectory))
        } else {
            handleRename(from: pair.from, to: pair.to)
        }
        if bProvisional {
            handleCreation(named: mirror.to.name, in: sourceDirectory, isDirectoryHint: mirror.to.mask.contains(.isDirectory))
        } else {
            handleRename(from: mirror.from, to: mirror.to)
        }
    }

    /// The status of `name` in `directory`, opened at the model's path and checked by identity.
    /// Opened for lookup only (`O_PATH`): a directory the watcher may search but not list
    /// (`-wx`) still has its names looked at (an exchange in one went unconfirmed, told as a
    /// move onto a name and a move back; scenario 140).
    func statusOfChild(_ name: [UInt8], in directory: WatchedDirectory) -> Result<FileStatus, Errno> {
        guard case .opened(let fd, _) = open(directory, forLookupOnly: true) else { return .failure(.noSuchFileOrDirectory) }
        defer { Syscalls.close(fd) }
        return withCString(name) { Syscalls.status($0, relativeTo: fd) }
    }

    mutating func handleMoveOut(_ source: Inotify.Event) {
        for index in targets[source.watch]?.fileRoots ?? [] { handleFileRoot(index, source) }
        guard standsAtSeveralPlaces(source.watch) else {
            if let directory = liveDirectory(source.watch) { handleMoveOut(source, from: directory) }
            return
        }
        // At each place of the model the directory stands (see ``handleRename(from:to:)``).
        for directory in liveDirectories(source.watch) { handleMoveOut(source, from: directory) }
    }

    private mutating func handleMoveOut(_ source: Inotify.Event, from directory: WatchedDirectory) {
        if !arrivals.isEmpty, let arrived = arrivals.removeValue(forKey: NameInModel(directory, source.name)),
           let entry = directory.children[source.name], entry.inode == arrived, holdsOnDisk(entry, named: source.name, in: directory) {
            // The second half of an exchange with a place out of view, read after its first
            // (``arrivals``): what left is the item the arrival replaced, which the model no
            // longer has (the arrival's `created` replaced it). Had the arrival itself left,
            // the name would not hold it now; had it left and come back, its return is still
            // queued, and is examined as any move in.
            return
        }
        removeItemMovedAway(named: source.name, in: directory)
    }

    /// Takes the items of `directory`'s subtree (at `path`) that the filter leaves out there
    /// out of the model, each told `removed` (see ``refilterMovedDirectory(named:in:path:)``).
    private mutating func pruneItemsNoLongerAdmitted(in directory: WatchedDirectory, at path: [UInt8]) {
        var leftOut: [[UInt8]] = []
        var below: [(WatchedDirectory, [UInt8])] = []
        for (slice, entry) in directory.children {
            let name = Array(slice)
            let itemPath = path.appendingComponent(name)
            if !options.filter.admits(relativePath: itemPath, name: name, isDirectory: entry.type == .directory) {
                leftOut.append(name)
            } else if let child = entry.directory {
                below.append((child, itemPath))
            }
        }
        for name in leftOut { removeItemMovedAway(named: name, in: directory, synthetic: true) }
        for (child, childPath) in below { pruneItemsNoLongerAdmitted(in: child, at: childPath) }
    }

    /// The model's item at `name` is no longer there, and where it went is not in view:
    /// `removed`, with its subtree unwatched (`synthetic` where the model, not the kernel,
    /// says it left: a filter that no longer admits it).
    private mutating func removeItemMovedAway(named name: [UInt8], in directory: WatchedDirectory, synthetic: Bool = false) {
        guard let entry = directory.children.removeValue(forKey: name) else {
            noteNameLeftWhilePending(name, in: directory)
            // An item in view that left before it could be examined (its creation still
            // waits, or its directory was never listed) may be another name of a file in view.
            let path = directory.relativePath.appendingComponent(name)
            if options.filter.isEmpty || options.filter.admits(relativePath: path, name: name, isDirectory: false)
                || options.filter.admits(relativePath: path, name: name, isDirectory: true) {
                requestLinkAudit()
            }
            return
        }
        if let child = entry.directory {
            // The same for items below it that the model never had.
            if hasUnexamined(below: child) { requestLinkAudit() }
            unwatch(child)
        }
        let id = identity(of: entry, in: directory)
        hardLinks.remove(id, directory, name, movedOutOfView: true)
        dropFileLink(name, in: directory)
        let path = directory.relativePath.appendingComponent(name)
        produced.append(makeEvent(.removed, root: directory.root, relative: path, type: entry.type, identity: id, synthetic: synthetic))
    }

    /// `name`, which the model does not have, was removed from `directory` or moved away:
    /// the creations of it queued so far are of an item no longer there
    /// (``namesLeftWhilePending``). Nothing to note while none waits.
    private mutating func noteNameLeftWhilePending(_ name: [UInt8], in directory: WatchedDirectory) {
        guard !pendingCreations.isEmpty || !deferredCreations.isEmpty else { return }
        namesLeftWhilePending[NameInModel(directory, name)] = creationsQueued
    }

    /// Whether `directory`'s subtree holds items the model never had: a directory not listed
    /// (yet), or a creation waiting to be examined.
    private func hasUnexamined(below directory: WatchedDirectory) -> Bool {
        let waiting = !pendingCreations.isEmpty || !deferredCreations.isEmpty
        var unlisted = false
        var nodes: Set<ObjectIdentifier> = []
        directory.forEachDirectory { node in
            if !node.isListed { unlisted = true }
            if waiting { nodes.insert(ObjectIdentifier(node)) }
        }
        if unlisted || !waiting { return unlisted }
        let inside = { (creation: PendingCreation) in nodes.contains(ObjectIdentifier(creation.directory)) }
        return pendingCreations.contains(where: inside) || deferredCreations.contains(where: inside)
    }

    private mutating func handleMoveIn(_ destination: Inotify.Event) {
        for index in targets[destination.watch]?.fileRoots ?? [] { handleFileRoot(index, destination) }
        let isDirectoryHint = destination.mask.contains(.isDirectory)
        guard standsAtSeveralPlaces(destination.watch) else {
            if let directory = liveDirectory(destination.watch) {
                handleCreation(named: destination.name, in: directory, isDirectoryHint: isDirectoryHint, replacing: true)
            }
            return
        }
        // At each place of the model the directory stands (see ``handleRename(from:to:)``).
        for directory in liveDirectories(destination.watch) {
            handleCreation(named: destination.name, in: directory, isDirectoryHint: isDirectoryHint, replacing: true)
        }
    }

    /// The root is gone (deleted, moved away, unmounted): report it and stop watching it.
    mutating func removeRoot(_ index: Int) {
        guard !roots[index].isRemoved else { return }
        roots[index].isRemoved = true
        // Kept examinations in that root are no longer good (see ``keptExaminations``).
        WatchedDirectory.linksChanged()
        let type: FileItemType
        switch roots[index].kind {
        case .directory(let tree):
            type = .directory
            unwatch(tree)
        case .file(let file):
            type = file.type
            for watch in watches(of: file) {
                targets[watch]?.fileRoots.removeAll { $0 == index }
                releaseIfUnused(watch)
            }
        }
        produced.append(makeEvent(.rootRemoved, root: index, relative: [], type: type, identity: nil, synthetic: false))
    }

    // MARK: Watch bookkeeping

    /// The node of the model that `watch` stands for now. A node that has left the model (its
    /// subtree was replaced or rescanned) never speaks for a watch, even if it is still listed.
    func liveDirectory(_ watch: CInt) -> WatchedDirectory? {
        targets[watch]?.directories.first { $0.isAttached }
    }

    /// The identity of `entry`, an item of `directory`; `nil` while it is unknown.
    func identity(of entry: WatchedEntry, in directory: WatchedDirectory) -> FileIdentity? {
        if let child = entry.directory, child.inode != 0 {
            return FileIdentity(device: child.device, inode: child.inode)
        }
        guard entry.inode != 0 else { return nil }
        return FileIdentity(device: directory.device, inode: entry.inode)
    }

    /// Stops watching a subtree that left the tree (or was replaced).
    ///
    /// - Parameter droppedByKernel: the directory was deleted, so the kernel removed its
    ///   watch itself (and those of anything still recorded below it); asking again would
    ///   only fail, and libinotifytools prints about it.
    mutating func unwatch(_ directory: WatchedDirectory, droppedByKernel: Bool = false) {
        let hasHardLinks = !hardLinks.isEmpty
        directory.forEachDirectory { node in
            dropFileLinks(in: node)
            if hasHardLinks {
                // Their other names in view may now be a file's only names in view.
                for (_, entry) in node.children where entry.type != .directory {
                    hardLinks.noteLeaving(FileIdentity(device: node.device, inode: entry.inode), movedOutOfView: !droppedByKernel)
                }
            }
            let watch = node.watch
            guard watch >= 0 else { return }
            node.watch = -1
            targets[watch]?.directories.removeAll { $0 === node }
            releaseIfUnused(watch, droppedByKernel: droppedByKernel)
        }
    }

    mutating func releaseIfUnused(_ watch: CInt, droppedByKernel: Bool = false) {
        guard let target = targets[watch], target.isEmpty else { return }
        targets[watch] = nil
        if !droppedByKernel { releasedWatches.append(watch) }
    }

    /// Removes the next batch of ``releasedWatches`` from the kernel, just before a read. A
    /// watch the model took again meanwhile is kept: `inotify_add_watch` on the same inode
    /// (the directory moved back in) answers with the watch that still stands.
    mutating func removeReleasedWatches() {
        for watch in releasedWatches.take(atMost: ReleasedWatches.batchSize) where targets[watch] == nil {
            kernel?.removeWatch(watch)
        }
    }

    /// `IN_IGNORED`: the kernel dropped the watch (its directory is gone, or it was removed).
    mutating func handleIgnored(_ event: Inotify.Event) {
        if targets[event.watch]?.fileLinks.isEmpty == false { handleFileLinkTarget(event) }
        forgetWatch(event.watch)
    }

    private mutating func forgetWatch(_ watch: CInt) {
        guard let target = targets.removeValue(forKey: watch) else { return }
        for directory in target.directories where directory.watch == watch { directory.watch = -1 }
    }
}

extension InotifyWatch.WatchedRoot {
    var tree: WatchedDirectory? {
        if case .directory(let tree) = kind, !isRemoved { return tree }
        return nil
    }
}
#endif
