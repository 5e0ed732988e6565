#if os(Linux)
import FileSystemEventsCore
import SystemPackage

extension InotifyWatch {
    /// A rebuild of the model asked for while events were still queued.
    struct ReconcileRequest {
        var afterOverflow: Bool
        /// Wall-clock nanoseconds: files changed since then are reported `modified` or
        /// `attributesChanged` by the rebuild, for the events read in between are not applied.
        var changedSince: Int64
        /// Monotonic nanoseconds of the request.
        var requestedAt: UInt64
    }

    /// Asks for the model to be rebuilt from disk once the kernel queue has drained, after
    /// `IN_Q_OVERFLOW` or when the model turns out to be wrong about where something is.
    ///
    /// Rebuilt at once, the model would show the disk as it is now while events of earlier
    /// changes are still queued. Those events would then be applied on top of a disk that
    /// already holds their effect (a rename `a → t` that was undone long ago would take `a`
    /// away again), and whatever the rebuild found (a marker file a consumer waits for, say)
    /// would be reported ahead of changes that came before it. So until the queue is empty
    /// the events read only keep the watch table and the settle tracker up to date (see
    /// ``handleWhileAwaitingReconcile(_:)``), and the rebuild reports their effect, with every
    /// file changed since the queue was last empty reported changed.
    /// Taken off a moment before file change times are compared with it: a file system's
    /// timestamps can lag the clock by a tick.
    static var changeTimeMarginNanoseconds: Int64 { 20_000_000 }

    mutating func requestReconcile(afterOverflow: Bool) {
        pendingMoveFrom = nil
        keepOnlyTablesUpToDateWithEventsAfterPendingMoveFrom()
        pendingMovePair = nil
        mirrorWaitStarted = 0
        moveTargetWaitStarted = 0
        if var request = reconcileRequest {
            request.afterOverflow = request.afterOverflow || afterOverflow
            reconcileRequest = request
            return
        }
        reconcileRequest = ReconcileRequest(afterOverflow: afterOverflow, changedSince: drainedAt - Self.changeTimeMarginNanoseconds,
                                            requestedAt: MonotonicClock.nanoseconds())
    }

    /// Rebuilds the model now if a rebuild was asked for.
    ///
    /// - Parameter queueDrained: every event queued before now has been read. Otherwise (a
    ///   tree that never stops changing) the events still queued are of changes the rebuild's
    ///   listing already shows: applied on top of it, a rename undone long ago would take its
    ///   directory away again. A marker queued before the listing begins tells them apart
    ///   (``awaitedMarker``); they then only keep the watch table up to date, as while the
    ///   rebuild waited. A kernel without markers has them applied, as it always did.
    mutating func performRequestedReconcile(queueDrained: Bool) {
        guard let request = reconcileRequest else { return }
        reconcileRequest = nil
        pendingMoveFrom = nil
        keepOnlyTablesUpToDateWithEventsAfterPendingMoveFrom()
        pendingMovePair = nil
        awaitedMarker = queueDrained ? nil : kernel?.queueMarker()
        reconcile(afterOverflow: request.afterOverflow, changedSince: request.changedSince)
        // Events queued after the listing began (after the marker, or at all when the queue
        // had drained) may be of changes the listing shows already: looked at again once the
        // queue is empty (``rescansAfterBusyListing``).
        if awaitedMarker != nil || kernel?.hasPendingEvents() == true {
            for index in roots.indices where !roots[index].isRemoved { rescanOnceQuiet(root: index) }
        }
    }

    /// Has the tree of root `index` rescanned once the queue is found empty
    /// (``rescansAfterBusyListing``), once however often it is asked for meanwhile.
    private mutating func rescanOnceQuiet(root index: Int) {
        guard let tree = roots[index].tree, !rescansAfterBusyListing.contains(where: { $0 === tree }) else { return }
        rescansAfterBusyListing.append(tree)
    }

    /// The events of a read up to the marker of a rebuild that began before the queue drained
    /// (``awaitedMarker``), kept out of the model like those read while a rebuild waits.
    ///
    /// - Returns: where the events after the marker begin; `nil` when the read holds no marker
    ///   (all of it came before), or when an overflow lost events (the marker among them,
    ///   perhaps) and asked for another rebuild.
    mutating func skipEventsBeforeMarker(_ events: ArraySlice<Inotify.Event>) -> Int? {
        guard let marker = awaitedMarker else { return events.startIndex }
        let end = events.firstIndex { $0.watch == marker && $0.mask.contains(.ignored) }
        let before = events[..<(end ?? events.endIndex)]
        if before.contains(where: { $0.mask.contains(.queueOverflow) }) {
            awaitedMarker = nil
            requestReconcile(afterOverflow: true)
            handleWhileAwaitingReconcile(events)
            return nil
        }
        handleWhileAwaitingReconcile(before)
        guard let end else { return nil }
        awaitedMarker = nil
        return end + 1
    }

    /// The events held back behind a lone `IN_MOVED_FROM` (``eventsAfterPendingMoveFrom``),
    /// when a rebuild takes its place: they keep the watch table and the settle tracker up to
    /// date, as events read while a rebuild waits do; the rebuild reports their effect.
    private mutating func keepOnlyTablesUpToDateWithEventsAfterPendingMoveFrom() {
        guard !eventsAfterPendingMoveFrom.isEmpty else { return }
        let after = eventsAfterPendingMoveFrom
        eventsAfterPendingMoveFrom = []
        handleWhileAwaitingReconcile(after[...])
    }

    /// The events of a read that comes while a rebuild waits for the queue to drain: only what
    /// does not describe the tree (a watch the kernel dropped, write activity for settling).
    mutating func handleWhileAwaitingReconcile(_ events: ArraySlice<Inotify.Event>) {
        for event in events {
            let mask = event.mask
            if mask.contains(.queueOverflow) {
                reconcileRequest?.afterOverflow = true
            } else if mask.contains(.ignored) {
                handleIgnored(event)
            } else if mask.contains(.closeWrite) || (settle != nil && (mask.contains(.modify) || (mask.contains(.movedTo) && !mask.contains(.isDirectory)))) {
                noteWriteActivity(event)
            }
        }
    }

    /// Rebuilds the model of every root from disk and reports the difference as synthetic
    /// events, after `IN_Q_OVERFLOW` (or when the model turns out to be wrong about where
    /// something is), so the replay invariant survives lost kernel events.
    ///
    /// Content cannot be diffed, since the model keeps no contents, so every file whose ctime
    /// is at or after the moment the queue was last known empty (less a margin for coarse file
    /// timestamps) is reported `modified` (mtime moved too) or `attributesChanged`. A few of
    /// those may be repeats; none can be missing.
    private mutating func reconcile(afterOverflow: Bool, changedSince since: Int64) {
        // Whatever waited to be examined is examined by the rescan itself.
        pendingCreations.removeAll()
        replacedNames.removeAll()
        namesLeftWhilePending.removeAll()
        changesWhilePending.removeAll()
        writtenNamesFoundGone.removeAll()
        // The rebuild reports every file changed since the queue was last empty.
        writtenNameGoneSince = nil
        survivingLinksOfWrittenFiles.removeAll()
        madeAtCount = 0
        arrivals.removeAll()
        examinedNames.removeAll()
        keptExaminations = 0
        deferredCreations.removeAll()
        provisionalNames.removeAll()
        pendingSince = 0
        pendingCrawls.removeAll()
        pendingRefilters.removeAll()
        rescansAfterBusyListing.removeAll()
        evictedNames.removeAll()
        hardLinks.removeAll()
        linksRemovedWhileWriting.removeAll()
        for index in roots.indices where !roots[index].isRemoved {
            let rootPath = roots[index].path
            if afterOverflow {
                produced.append(FileSystemEvent(kind: .overflow, path: rootPath, itemType: .directory, isSynthetic: false))
                diagnose(.rescannedAfterOverflow, roots[index].bytes, errno: nil,
                         "the kernel event queue overflowed (fs.inotify.max_queued_events); rescanned \(rootPath) to reconcile")
            }
            switch roots[index].kind {
            case .directory(let tree):
                if case .stale = rescan(tree, changedSince: since) { removeRoot(index) }
            case .file:
                refreshFileRoot(index, changedSince: since)
            }
        }
    }

    enum RescanOutcome {
        case rescanned
        /// The directory is no longer at its path.
        case stale
        /// The directory could not be read; the model keeps what it had.
        case unreadable
    }

    /// Rebuilds the subtree of `node` from disk (watch, then list, as always) and reports the
    /// difference from the model as synthetic events.
    ///
    /// - Parameters:
    ///   - sameIdentity: the directory at the node's path must still be the node's directory
    ///     (false after an unmount, which uncovers another directory at the same path).
    ///   - watchesDroppedByKernel: the old watches are gone already (an unmount).
    @discardableResult
    mutating func rescan(_ node: WatchedDirectory, changedSince: Int64?, sameIdentity: Bool = true, watchesDroppedByKernel: Bool = false) -> RescanOutcome {
        guard node.isAttached else { return .stale }
        let root = node.root
        // Detach the old subtree's watches without removing them from the kernel: the fresh
        // crawl gets the same watch back for every directory that is still there, and no event
        // is lost in between.
        var detached: [(WatchedDirectory, CInt)] = []
        var oldestListing = Int64.max
        node.forEachDirectory { current in
            oldestListing = min(oldestListing, current.listedAt)
            guard current.watch >= 0 else { return }
            detached.append((current, current.watch))
            targets[current.watch]?.directories.removeAll { $0 === current }
        }
        let fresh = WatchedDirectory(parent: node.parent, name: node.name, root: root,
                                     device: sameIdentity ? node.device : 0, inode: sameIdentity ? node.inode : 0)
        // Still reached through a followed symlink if it is the same directory; a mount point
        // is found again by the crawl's open (after an unmount, the directory found is the
        // one the mount covered, which the parent's watch hears).
        fresh.hearsOwnAttributes = sameIdentity && node.hearsOwnAttributes
        var state = CrawlState()
        // Without a time from the caller (a rescan after a missed move, not after lost
        // events), files changed since the subtree was listed are reported changed: the model
        // has no times, and a file at the same name with the same inode number may be a new
        // one that took a replaced file's number. Repeats cost a re-read; a miss, stale content.
        // (The walk above visits `node` itself, so `oldestListing` is one of the subtree's.)
        state.changedSince = changedSince ?? oldestListing - Self.changeTimeMarginNanoseconds
        state.findsLinks = true
        state.noteAncestors(from: node, above: roots[node.root].identitiesAbove)
        let wasPending = pendingCrawls.count
        crawl(fresh, emitting: false, state: &state)
        if let failure = state.failure { pendingFailure = failure }
        var outcome = RescanOutcome.rescanned
        if !fresh.isListed {
            outcome = pendingCrawls.count > wasPending && pendingCrawls.contains(where: { $0 === fresh }) ? .stale : .unreadable
        }
        pendingCrawls.removeAll { $0 === fresh }
        guard outcome == .rescanned else {
            for (current, watch) in detached {
                targets[watch, default: WatchTargets()].directories.append(current)
            }
            if fresh.watch >= 0 {
                let watch = fresh.watch
                targets[watch]?.directories.removeAll { $0 === fresh }
                releaseIfUnused(watch)
            }
            return outcome
        }
        let kept = keepUnreadableListings(of: node, in: fresh)
        let relative = node.relativePath
        let base = PathBuilder(root: roots[root].paths.path(relative))
        // The model keeps no times, so the new files are looked at for theirs: told oldest
        // first, as a polling scan tells them, a marker file made after the changes lost to an
        // overflow comes after them whatever its name (placed by name, `.marker` came first).
        var events = SnapshotDiff.events(from: node.snapshot(), to: fresh.snapshot(), root: base, pairsMovedItems: false) { path in
            guard case .success(let status) = Syscalls.status(atPath: path, followSymlinks: false) else { return nil }
            return status
        }
        if !state.changed.isEmpty {
            let created = Set(events.lazy.filter { $0.kind == .created }.map(\.path))
            var changes: [FileSystemEvent] = []
            for change in state.changed {
                let path = roots[root].paths.path(change.directory.relativePath.appendingComponent(change.name))
                guard !created.contains(path), let entry = change.directory.children[change.name] else { continue }
                changes.append(
                    FileSystemEvent(kind: change.content ? .modified : .attributesChanged, path: path, itemType: entry.type,
                                    isSynthetic: true, identity: identity(of: entry, in: change.directory))
                )
            }
            // Ahead of the new files, which the diff tells last: a write lost to an overflow
            // was made before a marker file that a rescan finds new.
            let newFiles = events.lastIndex { !($0.kind == .created && $0.itemType != .directory) }.map { $0 + 1 } ?? 0
            events.insert(contentsOf: changes, at: newFiles)
        }
        produced.append(contentsOf: events)
        // The fresh subtree takes the node's place.
        if !node.isRoot, let parent = node.parent {
            if var entry = parent.children[node.name], entry.directory === node {
                entry.directory = fresh
                entry.inode = fresh.inode
                parent.children[node.name] = entry
            }
        } else if node.isRoot {
            node.isReplacedRoot = true
            roots[root].kind = .directory(fresh)
        }
        registerLinks(foundBy: state, in: fresh)
        // Followed links of the old subtree: the fresh crawl watched those still there again.
        node.forEachDirectory { if !kept.contains(ObjectIdentifier($0)) { dropFileLinks(in: $0) } }
        for (current, watch) in detached {
            if kept.contains(ObjectIdentifier(current)) {
                register(current, watch: watch)
                continue
            }
            current.watch = -1
            releaseIfUnused(watch, droppedByKernel: watchesDroppedByKernel)
        }
        return outcome
    }

    /// Where the fresh crawl of a rescan could not list a directory that the model had listed
    /// (made unreadable since: `chmod 000`, as a user without `CAP_DAC_READ_SEARCH`), the old
    /// node and its subtree take the fresh one's place, watches and all: nothing says what it
    /// held went, and its watch, which outlives the `chmod`, still hears changes inside. Left
    /// unlisted, its contents were reported removed, and created again once readable; polling
    /// keeps an unreadable directory's last listing the same way.
    /// - Returns: the old nodes kept (every directory of each kept subtree).
    private mutating func keepUnreadableListings(of old: WatchedDirectory, in fresh: WatchedDirectory) -> Set<ObjectIdentifier> {
        var kept: Set<ObjectIdentifier> = []
        var pairs = [(old, fresh)]
        while let (oldDirectory, freshDirectory) = pairs.popLast() {
            var replaced: [(name: [UInt8], entry: WatchedEntry, keeping: WatchedDirectory)] = []
            for (name, entry) in freshDirectory.children {
                guard let freshChild = entry.directory, let previous = name.withUnsafeBytes({ oldDirectory.children.entry(named: $0) }),
                      let oldChild = previous.directory, previous.inode == entry.inode, oldChild.isListed
                else { continue }
                if freshChild.isListed {
                    pairs.append((oldChild, freshChild))
                } else if !pendingCrawls.contains(where: { $0 === freshChild }) {
                    replaced.append((Array(name), entry, oldChild))
                }
            }
            for (name, var entry, oldChild) in replaced {
                if let freshChild = entry.directory, freshChild.watch >= 0 {
                    let watch = freshChild.watch
                    targets[watch]?.directories.removeAll { $0 === freshChild }
                    freshChild.watch = -1
                    if watch != oldChild.watch { releaseIfUnused(watch) }
                }
                entry.directory = oldChild
                freshDirectory.children[name] = entry
                oldChild.parent = freshDirectory
                oldChild.isKeptWhileUnreadable = true
                oldChild.forEachDirectory { kept.insert(ObjectIdentifier($0)) }
            }
        }
        return kept
    }

    /// Rescans the nearest directory at or above `node` that is where the model says: the
    /// model missed a move somewhere below it. The root itself gone is a removed root.
    mutating func rescanNearestResolvable(_ node: WatchedDirectory) {
        var current = node
        while true {
            guard current.isAttached else { return }
            switch open(current) {
            case .opened(let fd, _):
                Syscalls.close(fd)
                let root = current.root
                // Begun with the queue empty; events queued since came from changes made while
                // the listing ran, which it may show already (``rescansAfterBusyListing``).
                // The whole tree is looked at again: a rename out of this subtree applied twice
                // puts the wrong item wherever it went.
                if rescan(current, changedSince: nil) == .rescanned, kernel?.hasPendingEvents() == true {
                    rescanOnceQuiet(root: root)
                }
                return
            case .inaccessible:
                return
            case .stale:
                guard let parent = current.parent else {
                    if current.isRoot { removeRoot(current.root) }
                    return
                }
                current = parent
            }
        }
    }
}
#endif
