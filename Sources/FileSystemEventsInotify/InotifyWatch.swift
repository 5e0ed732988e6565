#if os(Linux)
import Glibc
package import FileSystemEventsCore
import SystemPackage

/// One running inotify watch: the producer behind ``InotifyEventSource``.
///
/// One descriptor, drained into a 256 KiB buffer (until `EAGAIN`, or a read that left room
/// for the longest event) whenever `poll` says it is readable; the channel's wakeup pipe is in
/// the same `poll`, so a stop is seen at once. No timers: renames pair by cookie within the
/// kernel's ordered queue, and the latency window closes through the `poll` timeout.
///
/// ## Who owns the state
///
/// This struct owns all of it, and only its producer thread touches it: the extensions in
/// `InotifyWatch+Events.swift` (applying kernel events), `+Crawl.swift` (watch-then-list of a
/// directory), `+Rescan.swift` (rebuilding a subtree after an overflow or a wrong model),
/// `+FileRoot.swift` (roots that are files), `+FileLinks.swift` (followed symlinks to files)
/// and `+HardLinkWatches.swift` (files with a hard link out of view) are parts of one state
/// machine, split by concern, not separate owners. They keep these invariants between two
/// kernel reads:
///
/// - **The model is what the consumer has been told.** `roots[i]`'s tree of
///   ``WatchedDirectory`` nodes holds exactly the items the events produced so far describe
///   (replayed from the tree at `ready`). Every change to a node's `children` is paired with
///   the event that tells the consumer, in the same step (the crawl before `ready` builds the
///   starting tree itself); nothing else edits the tree.
/// - **Paths are derived, never stored.** A node's path comes from walking its parents, so a
///   renamed directory moves its whole subtree in one step. Anything the model resolves at a
///   path on disk may be stale (queued events will move it on) and is checked by device and
///   inode before it is believed.
/// - **`targets` maps every live watch descriptor to what it stands for**: the attached
///   directory nodes (several only when following symlinks or across roots), file roots, and
///   followed file links (symlinks to files, and files with a hard link out of view). A
///   descriptor whose targets become empty is removed from the kernel
///   (``releaseIfUnused(_:droppedByKernel:)``) unless the kernel dropped it already; a node that
///   leaves the model gives up its descriptor through ``unwatch(_:droppedByKernel:)``.
///   `fileLinkWatches` is the reverse index of the file-link part, kept in step by the same
///   calls that move or drop model entries.
/// - **Work waits in exactly one place.** A creation not yet examined is in
///   `pendingCreations`, a directory not yet openable at its path in `pendingCrawls`, half a
///   move in `pendingMoveFrom`/`pendingMovePair`; a rescan clears all of them, since it looks
///   at the disk itself.
/// - **Events leave only through `batcher`**, in the order they were produced, so the latency
///   window and the buffer limit apply to everything, synthetic events included.
package struct InotifyWatch<Kernel: InotifyKernel> {
    let options: WatchOptions
    let channel: FileSystemEventChannel
    var kernel: Kernel?
    var roots: [WatchedRoot] = []
    /// What each watch descriptor stands for.
    var targets: [CInt: WatchTargets] = [:]
    /// Watches no longer in ``targets``, removed from the kernel before the coming reads.
    var releasedWatches = ReleasedWatches()
    var batcher: EventBatcher
    /// Events produced while handling the current kernel read, delivered through `batcher`.
    var produced: [FileSystemEvent] = []
    /// A `IN_MOVED_FROM` whose `IN_MOVED_TO` has not been read yet.
    var pendingMoveFrom: Inotify.Event?
    /// The events read after ``pendingMoveFrom`` in its read, when they may have been queued
    /// between its two halves (writes, attribute changes: nothing that needs a directory's
    /// lock, which the renaming thread holds): handled after the second half, with the next
    /// read, or once the first half is taken for a move out (``MoveHalves``).
    var eventsAfterPendingMoveFrom: [Inotify.Event] = []
    /// A complete move pair that ended a read: `renameat2(RENAME_EXCHANGE)` queues two pairs
    /// together, and a read (or libinotifytools handing out a read's worth) can end between
    /// them, so the pair waits for the next read before it is taken for a plain rename.
    var pendingMovePair: (from: Inotify.Event, to: Inotify.Event)?
    /// Monotonic nanoseconds since when reads have found the queue empty while
    /// ``pendingMovePair`` could be the first half of an exchange (0 while none has). The
    /// kernel queues an exchange's two pairs one after the other inside the same system call,
    /// so a read racing that call can come between them; see ``waitsForMirror(of:)``.
    var mirrorWaitStarted: UInt64 = 0
    /// Monotonic nanoseconds since when reads have found the queue empty after an
    /// `IN_MOVED_FROM` with no `IN_MOVED_TO` yet (``pendingMoveFrom``; 0 while none has); see
    /// ``waitsForMoveTarget()``.
    var moveTargetWaitStarted: UInt64 = 0
    /// Wall-clock nanoseconds before the last read that found the queue empty: after an
    /// overflow, anything changed since then may have gone unreported.
    var drainedAt: Int64 = 0
    /// ``drainedAt`` as the last read began: the events it and the reads since returned were
    /// queued after this time.
    var drainedBeforeRead: Int64 = 0
    /// A rebuild of the model from disk that waits for the kernel queue to drain (see
    /// ``requestReconcile(afterOverflow:)``); `nil` when none is due.
    var reconcileRequest: ReconcileRequest?
    /// The watch number of the marker queued as a rebuild began before the queue drained
    /// (see ``InotifyKernel/queueMarker()``): the events read until its `IN_IGNORED` are of
    /// changes the rebuild already listed. `nil` when no such rebuild is catching up.
    var awaitedMarker: CInt?
    /// Directories reported unreadable, reported once each until they have been read again.
    var reportedUnreadable: Set<[UInt8]> = []
    /// Paths of files known to share an inode (hard links), so a write through one reports all.
    var hardLinks = HardLinkIndex()
    /// Names the kernel reported created, examined once the events read with them are applied
    /// (see ``resolvePending(drained:)``).
    var pendingCreations: [PendingCreation] = []
    /// Names where the model has an item onto which the kernel reported a move from a place
    /// the model does not know, with the inode number the move replaced, while that creation
    /// waits to be examined (``PendingCreation/replacedInode``). Until it is applied, the
    /// model's item there is no longer on disk at that name: a rename of the name moves the
    /// new item, not the model's (see ``handleRename(from:to:)``). Emptied with the creations.
    var replacedNames: [NameInModel: UInt64] = [:]
    /// How many creations have been queued for examination since the watch began: the order
    /// of ``PendingCreation/sequence`` and ``namesLeftWhilePending``.
    var creationsQueued: UInt64 = 0
    /// Names the model does not have that were removed or moved away while creations waited,
    /// with ``creationsQueued`` at the time: every creation of the name queued before that
    /// has left. An examination the kernel refuses (a directory the watcher may not search)
    /// cannot find such a name gone, and would put it in the model for good: `touch sub/n; mv
    /// sub/n out` read together left `sub/n` in a consumer's replay, with `sub` mode 0600
    /// (``recordUnexamined(_:errno:)``). Emptied with the creations.
    var namesLeftWhilePending: [NameInModel: UInt64] = [:]
    /// Set once a name could not be examined or a directory could not be read (permissions):
    /// the model may hold directories not listed, and names of unknown type and identity, to
    /// look at again when a `chmod` or a move may have made them visible
    /// (``unlistedDirectories(within:)``). Until then, none of that costs a walk.
    var mayHoldUnexamined = false
    /// Changes the kernel reported for names the model does not have yet, while creations
    /// wait to be examined: a new hard link written or changed through before its creation was
    /// applied changed the file's other names too (``reportChange(_:named:in:)``). Emptied
    /// with the creations.
    var changesWhilePending = PendingNameChanges()
    /// Wall-clock nanoseconds (less a margin) of the read before the first change recorded in
    /// ``changesWhilePending`` since it was last empty: no write it holds is older.
    var changesWhilePendingSince: Int64 = 0
    /// Names written through while their creations waited, examined and found gone before the
    /// event that moved them away was read (a batch taken early, beneath a held consumer), with
    /// what was recorded: a rename from such a name read later carries it to where the name
    /// went (``changesWhilePending``). The latest ``writtenNamesFoundGoneLimit`` only.
    var writtenNamesFoundGone: [(name: NameInModel, changes: Set<FileSystemEvent.Kind>)] = []
    static var writtenNamesFoundGoneLimit: Int { 64 }
    /// Set when a name written through while its creation waited was removed or replaced
    /// before it could be examined (``noteWrittenNamesGone(_:)``): the file written may have
    /// been another name of a file in view, now out of reach. Those with several names in the
    /// model are looked at for a change since this wall-clock time once the creations are
    /// applied.
    var writtenNameGoneSince: Int64?
    /// The names left of files that lost another name in view while a name written through
    /// waited to be examined (``changesWhilePending``): the write may have been to one of
    /// them, which had several names when it was made and may have one by the time the
    /// written name is found gone. Looked at with the files that still have several
    /// (``checkFilesWrittenThroughLostNames()``): `ln a c; echo >> c; rm b; mv t c`, read
    /// together, of a file named `a` and `b`, left `a` changed and never told (scenario 37 at
    /// seed offset 2201000, seed 2201204, on every event-driven backend). Emptied with the
    /// creations unless a written name was found gone; at most ``linkSurvivorLimit``.
    var survivingLinksOfWrittenFiles: [HardLinkCandidate] = []
    /// Files that lost a name by `unlink` while a write session was open (settling): the names
    /// left are watched on the file's inode (``watchNamesLeftBehind()``). Emptied there.
    var linksRemovedWhileWriting: Set<FileIdentity> = []
    static var linkSurvivorLimit: Int { 65_536 }
    /// How many waiting creations carry a ``PendingCreation/madeAt``: while none does, events
    /// are not checked against them.
    var madeAtCount = 0
    /// Events read since freed memory was last handed back (``trimAfterEvents``).
    var eventsSinceTrim = 0
    /// Items a move from a place the model does not know put at a name, by the inode found
    /// there when the creation was applied (``handleMoveIn(_:)``).
    ///
    /// `renameat2(RENAME_EXCHANGE)` of an unwatched item with a watched one queues its two
    /// halves one after the other, inside the system call: first `IN_MOVED_TO` of the
    /// arrival, then `IN_MOVED_FROM` of the item that left, at the same name. A read between
    /// the two finds the queue empty after examining the name, so the arrival is applied at
    /// once; the departure, read next, is then not the model's item's (the model's item is
    /// the arrival, still there). See ``handleMoveOut(_:)``. Bounded: emptied past
    /// ``arrivalLimit``, and by a rebuild.
    var arrivals: [NameInModel: UInt64] = [:]
    static var arrivalLimit: Int { 64 }
    /// The names of ``pendingCreations`` that carry a kept examination (empty when none do,
    /// so a read costs nothing more then).
    var examinedNames: Set<ExaminedName> = []
    /// How many leading ``pendingCreations`` the last attempt that found the queue busy left
    /// with a kept examination, found attached at ``keptExaminationsGeneration`` (a
    /// ``WatchedDirectory/linkGeneration``). The next attempt starts after them while no
    /// directory has left the model since and none of them was forgotten, so a burst that
    /// keeps the queue busy costs each attempt its new creations, not all that wait (28
    /// attempts over up to 17,000 waiting creations in a 20,000-file burst).
    var keptExaminations = 0
    var keptExaminationsGeneration = -1
    /// The last directory whose path ``relativePath(of:)`` derived, at which
    /// ``WatchedDirectory/linkGeneration``, and the path: a burst's creations mostly share a
    /// directory, whose path was otherwise walked up and joined again for every one.
    var cachedPath: (directory: UInt64, generation: Int, path: [UInt8])?
    /// Creations of a batch examined before the queue drained whose name held an item the model
    /// has at another name: the rename that put it there is still queued. They are examined
    /// again with the next batch (see ``resolvePending(drained:)``).
    var deferredCreations: [PendingCreation] = []
    /// Names whose items were put into the model from a batch examined before the queue
    /// drained: until it drains, a rename of such a name may be of another item (see
    /// ``resolvePending(drained:)``).
    var provisionalNames: Set<NameInModel> = []
    /// Directories of the model that could not be opened at their path yet.
    var pendingCrawls: [WatchedDirectory] = []
    /// Directories moved under a filter that looks at paths, whose subtree could not be looked
    /// at again at the new path (moved on since, by events still queued): rescanned where they
    /// are once the queue has been read (``refilterMovedDirectory(named:in:path:)``).
    var pendingRefilters: [WatchedDirectory] = []
    /// The trees of roots where a directory was rescanned after a missed move
    /// (``rescanNearestResolvable(_:)``) while changes went on: their events, queued during
    /// the listing, are applied on top of a listing that may show them already, and a rename
    /// applied twice moves the wrong item (`mv a t; mv b a; mv t b` undone in the model, told
    /// as done), into that directory or out of it anywhere in the tree. Rescanned once the
    /// queue is found empty, before the next creations are told, as often as it takes, so the
    /// model ends as the disk is.
    var rescansAfterBusyListing: [WatchedDirectory] = []
    /// Names whose stale directory left the model (``evictIfStale(_:)``): the model missed a
    /// move there, so nothing queued will say what the name holds now. Examined right after
    /// the creation whose crawl found them, before the next one is told.
    var evictedNames: [(directory: WatchedDirectory, name: [UInt8])] = []
    /// Monotonic nanoseconds since when ``pendingCreations`` has been waiting for a quiet
    /// kernel queue (0 when nothing waits).
    var pendingSince: UInt64 = 0
    /// Set while pending work is resolved with the kernel queue found empty: what still
    /// disagrees with the disk then is a move the model missed, not one still queued.
    var isResolvingDrained = false
    /// Decides `settled` from opens, closes and writes when ``WatchOptions/settleQuietPeriod``
    /// is set.
    var settle: SettleTracker?
    /// The regular files found by the initial crawl when settling, settled (or tracked) once
    /// `ready` has been sent.
    var presentAtReady: [(root: Int, relative: [UInt8], status: FileStatus)] = []
    /// A failure found while handling events (the watch limit, say) that ends the watch.
    var pendingFailure: FileSystemEventsError?
    /// Monotonic nanoseconds of the next look at the roots' paths (``checkRootPaths()``).
    var nextRootPathCheck: UInt64 = 0
    /// The watch on the target of each followed symlink to a file, by the link's place in
    /// the model (see `InotifyWatch+FileLinks.swift`).
    var fileLinkWatches: [NameInModel: CInt] = [:]
    /// Files to check for names out of view once the events read with them are applied (see
    /// `InotifyWatch+HardLinkWatches.swift`).
    var hardLinkCandidates: [HardLinkCandidate] = []
    /// The inotify watch limit stopped a watch on a file with a name out of view, and a
    /// diagnostic said so.
    var hardLinkWatchLimitReported = false
    /// The names in the model of the files that creations being applied found under a name
    /// the filter refuses, with more than one link (see ``findNamesInView(ofFilteredOutLinks:)``).
    var namesOfFilteredOutLinks: [FileIdentity: [(WatchedDirectory, [UInt8])]] = [:]
    /// The change the last event reported through a directory's watch, if any: `nil` again
    /// after any other event, dispatched or not (a move, a close). Kept across a move out of
    /// view, it made the next write through the moved name, heard by the file's own watch
    /// however much later, look like the second half of the write before the move.
    var lastReportedChange: ReportedChange?
    /// ``lastReportedChange`` as the event being dispatched began.
    var changeBeforeThisEvent: ReportedChange?
    /// The last change heard by the watch of a file with names out of view and told at its
    /// names, while ``produced`` still holds it (``LinkFanOut``).
    var lastLinkFanOut: LinkFanOut?
    /// How many times ``produced`` was handed to the batcher or discarded: a ``LinkFanOut``
    /// holds for the events gathered since, which the batcher coalesces together.
    var producedHandOvers = 0
    /// Set when every file of the model is to be examined again for names out of view (see
    /// ``requestLinkAudit()``): wall-clock nanoseconds since when a change found is reported.
    var linkAuditSince: Int64?
    /// How long the last such examination took, and when it ended (monotonic nanoseconds).
    var linkAuditDuration: UInt64 = 0
    var linkAuditEnded: UInt64 = 0

    var watchMask: Inotify.Mask {
        var mask = Inotify.Mask.eventModel.union([.onlyDirectory, .excludeUnlinked])
        if !options.followsSymlinks { mask.insert(.dontFollow) }
        if settle != nil { mask.insert(.closeWrite) }
        return mask
    }

    struct WatchedRoot {
        let path: FilePath
        let paths: PathBuilder
        let bytes: [UInt8]
        /// The root's device: inotify reports no identities, the model knows inode numbers.
        let device: UInt64
        var kind: Kind
        var isRemoved = false
        /// With ``WatchOptions/followsSymlinks``, the directories above the root, up to `/`: a
        /// link to one of them leads back onto the root's own path, and is never entered
        /// (``Syscalls/identitiesAbove(directoryAt:)``).
        var identitiesAbove: [FileIdentity] = []

        enum Kind {
            case directory(WatchedDirectory)
            /// A single file, watched through its parent directory (``InotifyWatch/FileRoot``).
            case file(FileRoot)
        }
    }

    package init(options: WatchOptions, channel: FileSystemEventChannel) {
        self.options = options
        self.channel = channel
        self.batcher = EventBatcher(latency: options.latency, bufferLimit: options.bufferLimit)
        self.settle = options.settleQuietPeriod.map { SettleTracker(quietPeriod: $0, usesOpenAndClose: true) }
    }

    /// Has the Swift runtime make, before `ready`, the type metadata that the first batch of
    /// creations needs and the start-up crawl did not.
    ///
    /// The watch is generic over its kernel, so the arrays of its nested types have no
    /// metadata in the binary: the runtime makes each from its mangled name the first time
    /// one is allocated, and caches it. Left to the first event, that made it 150-200 µs
    /// later than the next ones in the static CLI, where every later event took 60-90 µs
    /// (`perf record` of the first event after `ready`, 2026-12-03: the demangler and the
    /// metadata cache, under `examine`, the pending creations and the events they produce).
    static func prepareEventPathTypes() {
        var creations: [PendingCreation] = []
        creations.reserveCapacity(1)
        var examinations: [Examination] = []
        examinations.reserveCapacity(1)
        let directories = OpenedDirectories.withStorage()
        var events: [FileSystemEvent] = []
        events.reserveCapacity(1)
        var batches: [[FileSystemEvent]] = []   // the batcher's closed windows
        batches.reserveCapacity(1)
        var flags: [Bool] = []
        flags.reserveCapacity(1)
        // Kept alive to here, so that the optimizer cannot drop the allocations as unused.
        withExtendedLifetime((creations, examinations, directories, events, batches, flags)) {}
    }

    // MARK: Run loop

    /// Runs the watch until the consumer goes away, the roots are gone, or it fails.
    ///
    /// - Parameter makeKernel: opens the kernel interface, on the watch's own thread.
    package mutating func run(makeKernel: () throws(FileSystemEventsError) -> Kernel) {
        do {
            kernel = try makeKernel()
        } catch {
            channel.finish(throwing: error)
            return
        }
        defer { kernel?.close() }
        channel.send(.scanStarted(roots: options.roots))
        drainedAt = FileSystemEvent.Timestamp.now().nanosecondsSinceEpoch
        do {
            for (index, root) in options.roots.enumerated() {
                try addRoot(root, index: index)
            }
        } catch {
            channel.finish(throwing: error)
            return
        }
        absorbChangesMadeDuringStartUp()
        // The files the crawl found with more links than names in view are watched on their
        // own before `ready` (see `InotifyWatch+HardLinkWatches.swift`).
        if hardLinks.hasUnresolved { hardLinks.resolve(searching: roots.compactMap(\.tree)) }
        watchCandidatesOutOfView()
        flushDiagnostics()
        if options.capturesInitialState { channel.setInitialState(initialState()) }
        Self.prepareEventPathTypes()
        guard channel.send(.ready(roots: options.roots)) != .terminated else { return }
        settlePresentFiles()
        // Files already finished are settled now: handed over before the first wait, which
        // has no deadline when nothing else is pending (they used to wait there until some
        // unrelated event woke the loop).
        deliver(all: false)

        var parsed: [Inotify.Event] = []
        parsed.reserveCapacity(4096)
        let readiness = kernel?.readinessDescriptor ?? -1

        while true {
            let status = channel.producerStatus
            if status.isTerminated { return }
            if status.isFinishRequested {
                // What the kernel holds now is the last of it: a pair still waiting for its
                // mirror, or a lone IN_MOVED_FROM for its IN_MOVED_TO, is decided at once.
                _ = readAvailable(&parsed, waitingForSecondHalves: false)
                deliver(all: true)
                channel.finish()
                return
            }
            if !status.hasRoom {
                // The consumer is behind. Stop reading: the kernel queue absorbs what it can,
                // then overflows, and the rescan after IN_Q_OVERFLOW reconciles. Memory stays
                // bounded by the buffer limit. Creations waiting for the queue to drain wait
                // afresh: the queue could not drain while the watch was not reading it.
                if pendingSince != 0 { pendingSince = MonotonicClock.nanoseconds() }
                if !channel.requestWakeupWhenRoom() {
                    _ = Syscalls.pollReadable([channel.wakeupReadEnd], timeoutMilliseconds: -1)
                    channel.drainWakeups()
                    continue
                }
            }
            var timeout = batcher.millisecondsUntilDue(now: MonotonicClock.nanoseconds())
            // Creations and crawls still waiting for the model to catch up are looked at again
            // soon even if the kernel says nothing more: the queue they waited for may be
            // empty already (a read stopped early for the consumer, or a move still settling).
            let hasPendingWork = waitsForTheQueue || linkAuditSince != nil || !releasedWatches.isEmpty
            if hasPendingWork { timeout = timeout < 0 ? 2 : min(timeout, 2) }
            if let deadline = settle?.nextDeadlineNanoseconds {
                let wait = MonotonicClock.pollTimeout(from: MonotonicClock.nanoseconds(), until: deadline)
                timeout = timeout < 0 ? wait : min(timeout, wait)
            }
            if nextRootPathCheck == 0 { nextRootPathCheck = MonotonicClock.nanoseconds() &+ Self.rootPathCheckIntervalNanoseconds }
            let untilRootCheck = MonotonicClock.pollTimeout(from: MonotonicClock.nanoseconds(), until: nextRootPathCheck)
            timeout = timeout < 0 ? untilRootCheck : min(timeout, untilRootCheck)
            // After a burst, a quiet moment hands back what it allocated (``trimAfterEvents``).
            let trimsWhenQuiet = eventsSinceTrim >= Self.trimAfterEvents
            if trimsWhenQuiet { timeout = timeout < 0 ? Self.quietBeforeTrimMilliseconds : min(timeout, Self.quietBeforeTrimMilliseconds) }
            let ready: (first: Bool, second: Bool)
            switch Syscalls.pollReadable(readiness, channel.wakeupReadEnd, timeoutMilliseconds: timeout) {
            case .success(let readable): ready = readable
            case .failure(let errno):
                channel.finish(throwing: .systemCallFailed(call: "poll", path: nil, errno: errno))
                return
            }
            if ready.second { channel.drainWakeups() }
            if trimsWhenQuiet && !ready.first && !ready.second && !waitsForTheQueue {
                eventsSinceTrim = 0
                MemoryRelease.returnFreedPages()
            }
            if ready.first || hasPendingWork {
                if let error = readAvailable(&parsed) ?? pendingFailure {
                    deliver(all: true)
                    channel.finish(throwing: error)
                    return
                }
            }
            if MonotonicClock.nanoseconds() >= nextRootPathCheck {
                checkRootPaths()
                nextRootPathCheck = MonotonicClock.nanoseconds() &+ Self.rootPathCheckIntervalNanoseconds
            }
            deliver(all: false)
            if roots.allSatisfy(\.isRemoved) {
                deliver(all: true)
                channel.finish()
                return
            }
        }
    }

    /// Hands the files present at `ready` to the settle tracker: the finished ones are settled
    /// now, in path order.
    private mutating func settlePresentFiles() {
        guard settle != nil, !presentAtReady.isEmpty else { return }
        var files = presentAtReady
        presentAtReady = []
        files.sort { $0.root != $1.root ? $0.root < $1.root : compareBytes($0.relative, $1.relative) < 0 }
        let wallNow = WallClock.wallNanoseconds()
        let now = MonotonicClock.nanoseconds()
        for file in files {
            let path = roots[file.root].paths.bytes(file.relative)
            if let settled = settle!.presentAtReady(path, identity: file.status.identity, changeTime: file.status.changeTime,
                                                    wallNow: wallNow, now: now) {
                produced.append(settled)
            }
        }
    }

    /// Hands finished work to the batcher and due batches to the consumer.
    private mutating func deliver(all: Bool) {
        if settle != nil {
            let now = MonotonicClock.nanoseconds()
            produced = settle!.observe(produced, now: now)
            // A file made and not yet written as far as the kernel said is looked at before it
            // settles: its creator may be in the middle of one long copy (`SettleTracker`).
            produced += settle!.due(now: now) { path in
                guard case .success(let status) = Syscalls.status(atPath: path, followSymlinks: false) else { return nil }
                return status
            }
        }
        if !produced.isEmpty {
            batcher.add(produced, now: MonotonicClock.nanoseconds())
            produced.removeAll(keepingCapacity: true)
            producedHandOvers &+= 1
        }
        flushDiagnostics()
        let batch = all ? (batcher.isEmpty ? nil : batcher.takeAll()) : batcher.takeIfDue(now: MonotonicClock.nanoseconds())
        if let batch, !batch.isEmpty {
            channel.send(.events(batch))
        }
    }

    /// Applies to the model, without telling them, the changes made while the start-up crawl
    /// ran, so that `ready` comes with a model of the tree as it is then.
    ///
    /// Why: each directory is watched before it is listed, so what changes during the crawl is
    /// queued, and the model holds a mix of listings taken before and after each change. Told
    /// after `ready`, these changes reached a consumer that had read the tree at `ready`, which
    /// shows them already: told twice. Most are harmless twice (a creation of what is there),
    /// but a rename is not: `mv a/s b/m` during the crawl, told after `ready`, moved an `a/s`
    /// the consumer never had onto the `b/m` it had read, and erased it (a helper's start-up
    /// hunt: 20 directory renames while a crawl of 10,000 directories was stopped, 6 of 6 runs
    /// lost up to 5 paths).
    ///
    /// Read until the queue is found empty with nothing left waiting for it (a rename's other
    /// half, a creation to examine), for at most ``maximumResolutionDelayNanoseconds``: a tree
    /// that never stops changing still gets its `ready`, and what is queued then is told after
    /// it, as before. Not where files are settled: a settling session follows the events it is
    /// told (see ``SettleTracker``), and files present at `ready` are settled from the crawl's
    /// own list.
    private mutating func absorbChangesMadeDuringStartUp() {
        guard settle == nil, let readiness = kernel?.readinessDescriptor else { return }
        let deadline = MonotonicClock.nanoseconds() &+ Self.maximumResolutionDelayNanoseconds
        var parsed: [Inotify.Event] = []
        // What reading would tell goes, after every read (so that the buffer limit does not
        // stop the next) and at the end.
        func discardTold() {
            produced.removeAll(keepingCapacity: true)
            producedHandOvers &+= 1
            if !batcher.isEmpty { _ = batcher.takeAll() }
        }
        defer { discardTold() }
        while kernel?.hasPendingEvents() == true || waitsForTheQueue {
            if MonotonicClock.nanoseconds() >= deadline || channel.producerStatus.isTerminated { break }
            let failure = readAvailable(&parsed)
            discardTold()
            if let failure {
                pendingFailure = failure
                break
            }
            // A pair waiting for its mirror, or creations for a quiet queue: wait a moment
            // for the kernel rather than spin.
            if kernel?.hasPendingEvents() != true { _ = Syscalls.pollReadable([readiness], timeoutMilliseconds: 2) }
        }
    }

    /// Reads until the queue is empty (or a generous number of reads, so a flood cannot
    /// starve delivery), handling every event.
    private mutating func readAvailable(_ parsed: inout [Inotify.Event], waitingForSecondHalves: Bool = true) -> FileSystemEventsError? {
        for _ in 0..<64 {
            if let request = reconcileRequest,
               MonotonicClock.nanoseconds() &- request.requestedAt >= Self.maximumResolutionDelayNanoseconds {
                // The queue never drains (a writer that does not stop): rebuild anyway, as
                // late creations are examined anyway.
                performRequestedReconcile(queueDrained: false)
            }
            if !releasedWatches.isEmpty { removeReleasedWatches() }
            let before = WallClock.wallNanoseconds()
            drainedBeforeRead = drainedAt
            parsed.removeAll(keepingCapacity: true)
            // Take from the kernel queue only about as much as the buffer limit allows: a stalled
            // consumer leaves the rest there (and an overflow reconciles), as documented.
            let budget = max(0, options.bufferLimit - produced.count - pendingCreations.count - deferredCreations.count) &* 48
            switch kernel?.read(into: &parsed, maximumBytes: budget) ?? .failure(.badFileDescriptor) {
            case .success:
                mirrorWaitStarted = 0
                moveTargetWaitStarted = 0
                eventsSinceTrim &+= parsed.count
                handle(parsed)
                if !changesWhilePending.isEmpty && (!hardLinks.isEmpty || hardLinks.hasLeftBehind || !survivingLinksOfWrittenFiles.isEmpty) {
                    noteWrittenNamesGone(parsed)
                }
                if produced.count + pendingCreations.count + deferredCreations.count >= options.bufferLimit || !channel.hasRoom {
                    // Enough for the consumer for now; what stays in the kernel queue waits
                    // (and overflows into a rescan if the consumer stays behind).
                    resolvePendingWork(drained: false)
                    return nil
                }
                if kernel?.lastReadEmptiedQueue == true {
                    queueFoundEmpty(readStartedAt: before, waitingForSecondHalves: waitingForSecondHalves)
                    return nil
                }
            case .failure(.resourceTemporarilyUnavailable):
                queueFoundEmpty(readStartedAt: before, waitingForSecondHalves: waitingForSecondHalves)
                return nil
            case .failure(let errno):
                return .systemCallFailed(call: "read (inotify)", path: nil, errno: errno)
            }
        }
        resolvePendingWork(drained: false)
        return nil
    }

    /// What follows a read that found the kernel queue empty (`EAGAIN`, or a read that proved
    /// it: ``InotifyKernel/lastReadEmptiedQueue``): settles what waited for the queue to drain.
    ///
    /// - Parameter readStartedAt: the wall time taken before that read: ``drainedAt``.
    private mutating func queueFoundEmpty(readStartedAt before: Int64, waitingForSecondHalves: Bool) {
        drainedAt = before
        // A kernel that owns no descriptor of its own (libinotifytools) may say it has
        // nothing while events are still on their way to it. On the kernel's own
        // descriptor the read says it all: asking again costs a system call on every
        // wake-up. A rebuild due now asks whatever the kernel: it is rare, and events
        // queued since the read then go behind its marker
        // (``performRequestedReconcile(queueDrained:)``) rather than being applied to a
        // listing that may show them already.
        let asksKernel = reconcileRequest != nil || kernel?.emptyReadProvesDrained != true
        let isDrained = asksKernel ? kernel?.hasPendingEvents() != true : true
        // Read by now, if it was awaited; nothing but a lost event would keep it away.
        if isDrained { awaitedMarker = nil }
        if reconcileRequest != nil {
            // Everything queued before the rebuild was asked for has been read: the
            // disk it lists now is later than every event still to come.
            performRequestedReconcile(queueDrained: isDrained)
            resolvePendingWork(drained: true)
            return
        }
        if waitingForSecondHalves, let pair = pendingMovePair, waitsForMirror(of: pair) {
            resolvePendingWork(drained: false)
            return
        }
        mirrorWaitStarted = 0
        if let pair = pendingMovePair {
            // No mirror followed it: a plain rename, not half of an exchange.
            pendingMovePair = nil
            handleRename(from: pair.from, to: pair.to)
        }
        if let pending = pendingMoveFrom {
            if waitingForSecondHalves && waitsForMoveTarget() {
                resolvePendingWork(drained: false)
                return
            }
            // No IN_MOVED_TO came: the item left the watched tree.
            pendingMoveFrom = nil
            moveTargetWaitStarted = 0
            handleMoveOut(pending)
            if !eventsAfterPendingMoveFrom.isEmpty {
                let after = eventsAfterPendingMoveFrom
                eventsAfterPendingMoveFrom = []
                handle(after)
            }
        }
        resolvePendingWork(drained: true)
    }

    /// Whether a move pair that the kernel queue ended on must wait for another read before
    /// it is taken for a plain rename, because it may be the first half of an exchange.
    ///
    /// `renameat2(RENAME_EXCHANGE)` swaps the two names first and then queues its two pairs,
    /// one after the other; a reader on the other core can find the queue empty between them,
    /// for as long as the renaming thread is preempted there (milliseconds on a loaded
    /// machine; a fixed wait of one more read lost that race). The disk tells the two cases
    /// apart: a plain rename `a → b` leaves no `a`, and whatever makes a new `a` queues its
    /// own event, which ends the wait through the next read. So while `a` stands on disk and
    /// nothing explains it, the mirror is on its way, and the pair waits for it (at most
    /// ``mirrorWaitLimit``, so a watch never hangs on a disk that says otherwise).
    private mutating func waitsForMirror(of pair: (from: Inotify.Event, to: Inotify.Event)) -> Bool {
        guard isExchangeCandidate(pair) else { return false }
        let now = MonotonicClock.nanoseconds()
        guard mirrorWaitStarted != 0 else {
            // Always one more read: the mirror is usually queued by then.
            mirrorWaitStarted = now
            return true
        }
        guard now &- mirrorWaitStarted < Self.mirrorWaitLimit,
              let source = liveDirectory(pair.from.watch),
              case .success = statusOfChild(pair.from.name, in: source)
        else { return false }
        return true
    }

    /// How many events a burst reads before the watch, once it has told them and the kernel
    /// stays quiet for ``quietBeforeTrimMilliseconds``, hands the memory they freed back to
    /// the system (`malloc_trim`, a few milliseconds for a burst's heap). The events of a
    /// burst, and the lists that carried them, are allocated on one thread and freed on
    /// another (the reader's and the consumer's, or libinotifytools' owner thread's and the
    /// watch's), where glibc keeps them in the allocating thread's arena: through
    /// libinotifytools, 20,000 creates left 15 MiB of anonymous memory resident for the
    /// rest of the watch, against under 1 MiB in use.
    static var trimAfterEvents: Int { 4_096 }
    static var quietBeforeTrimMilliseconds: CInt { 100 }

    /// The longest a move pair waits for its mirror while the disk says an exchange is under
    /// way (nanoseconds).
    static var mirrorWaitLimit: UInt64 { 1_000_000_000 }

    /// Whether an `IN_MOVED_FROM` that the queue ended on waits for another read before it is
    /// taken for a move out of the tree.
    ///
    /// The kernel queues a rename's two halves one after the other, not at once
    /// (`fsnotify_move` notifies the old directory, then the new one), and a reader on the
    /// other core often finds the queue empty between them: on the machine of 2026-11-26, 32
    /// of 9,013 reads racing a loop of renames ended on a lone `IN_MOVED_FROM`. Taken for a
    /// move out at once, a rename became a removal and a creation, and half an exchange
    /// removed an item that was still in the tree (scenario 94 through libinotifytools,
    /// whose owner thread hands events on in the same order). So the half waits for its
    /// other half, for at most ``moveTargetWaitLimit``: a real move out of the tree, when it is
    /// the last thing queued, is told that much later.
    private mutating func waitsForMoveTarget() -> Bool {
        let now = MonotonicClock.nanoseconds()
        guard moveTargetWaitStarted != 0 else {
            moveTargetWaitStarted = now
            return true
        }
        return now &- moveTargetWaitStarted < Self.moveTargetWaitLimit
    }

    /// The longest a lone `IN_MOVED_FROM` waits for its `IN_MOVED_TO` (nanoseconds): a few
    /// scheduler time slices, for a renaming thread preempted between the two notifications.
    static var moveTargetWaitLimit: UInt64 { 50_000_000 }

    /// Whether `pair` can be the first half of an exchange: both names stand in the model, or
    /// wait there to be examined (an exchange swaps two existing items, and `echo > f;
    /// exchange d f` can be read in one go). A pair to a name nothing stands at is decided
    /// at once. The pending creations are searched only here, when a read ends on a pair.
    private func isExchangeCandidate(_ pair: (from: Inotify.Event, to: Inotify.Event)) -> Bool {
        guard let source = liveDirectory(pair.from.watch), let destination = liveDirectory(pair.to.watch) else { return false }
        func stands(_ name: [UInt8], in directory: WatchedDirectory) -> Bool {
            if directory.children[name] != nil { return true }
            let waiting = { (creation: PendingCreation) in creation.directory === directory && creation.name == name }
            return pendingCreations.contains(where: waiting) || deferredCreations.contains(where: waiting)
        }
        return stands(pair.from.name, in: source) && stands(pair.to.name, in: destination)
    }

    /// Creations and crawls that waited for the events read with them, then the other paths of
    /// new hard links, in one walk for the whole batch.
    private mutating func resolvePendingWork(drained: Bool) {
        // What waits is examined by the rebuild, against the disk after the queue drained.
        guard reconcileRequest == nil else { return }
        if hardLinks.hasUnresolved { hardLinks.resolve(searching: roots.compactMap(\.tree)) }
        // What these find changed before the creations below were made: told ahead of them.
        watchNamesLeftBehind()
        if linkAuditSince != nil { auditLinksIfDue() }
        if (pendingMoveFrom == nil && pendingMovePair == nil) || drained {
            // Every event queued when a batch was examined early has been read and applied.
            if drained { provisionalNames.removeAll() }
            if awaitsQuietQueue { resolvePending(drained: drained) }
        }
        if hardLinks.hasUnresolved { hardLinks.resolve(searching: roots.compactMap(\.tree)) }
        if writtenNameGoneSince != nil && pendingCreations.isEmpty && deferredCreations.isEmpty { checkFilesWrittenThroughLostNames() }
        watchCandidatesOutOfView()
    }

    /// Work that waits for what the kernel queue holds next, or for finding it empty: a
    /// rename's other half, a rebuild, creations and crawls (``awaitsQuietQueue``).
    private var waitsForTheQueue: Bool {
        awaitsQuietQueue || pendingMovePair != nil || pendingMoveFrom != nil || reconcileRequest != nil
    }

    /// Creations (pending or deferred) or crawls wait for the kernel queue to drain.
    private var awaitsQuietQueue: Bool {
        !pendingCreations.isEmpty || !deferredCreations.isEmpty || !pendingCrawls.isEmpty || !evictedNames.isEmpty
            || !pendingRefilters.isEmpty || !rescansAfterBusyListing.isEmpty
    }

    /// The model as it stands, one snapshot per root: names, types and identities.
    private func initialState() -> [FileTreeSnapshot] {
        roots.map { root in
            let snapshot: RootSnapshot
            switch root.kind {
            case .directory(let tree):
                snapshot = RootSnapshot(status: FileStatus(device: tree.device, inode: tree.inode, mode: FileItemType.directory.modeBits),
                                        tree: tree.snapshot())
            case .file(let file):
                snapshot = RootSnapshot(status: FileStatus(device: root.device, inode: file.inode, mode: file.type.modeBits), tree: nil)
            }
            return FileTreeSnapshot(root: root.path, snapshot: snapshot, options: options, recordsAttributes: false)
        }
    }

    // MARK: Diagnostics

    var pendingDiagnostics: [FileSystemWatchDiagnostic] = []

    mutating func diagnose(_ problem: FileSystemWatchDiagnostic.Problem, _ path: [UInt8], errno: Errno?, _ message: String) {
        if problem == .unreadableDirectory {
            guard reportedUnreadable.insert(path).inserted else { return }
        }
        let diagnostic = FileSystemWatchDiagnostic(problem: problem, path: FilePath(bytes: path), errno: errno, message: message)
        options.logger?.warning("\(message)")
        pendingDiagnostics.append(diagnostic)
    }

    private mutating func flushDiagnostics() {
        for diagnostic in pendingDiagnostics { channel.send(.diagnostic(diagnostic)) }
        pendingDiagnostics.removeAll()
    }

    // MARK: Event construction

    /// `directory.relativePath`, remembered for the last directory asked about until a link
    /// of the model changes (a node freed counts, so its identifier is not reused meanwhile).
    mutating func relativePath(of directory: WatchedDirectory) -> [UInt8] {
        let generation = WatchedDirectory.linkGeneration.load(ordering: .relaxed)
        if let cachedPath, cachedPath.directory == directory.serial, cachedPath.generation == generation {
            return cachedPath.path
        }
        let path = directory.relativePath
        cachedPath = (directory.serial, generation, path)
        return path
    }

    /// - Parameter identity: omitted when unknown (an item gone before it could be examined),
    ///   never invented.
    func makeEvent(
        _ kind: FileSystemEvent.Kind,
        root: Int,
        relative: [UInt8],
        previous: [UInt8]? = nil,
        type: FileItemType,
        identity: FileIdentity?,
        synthetic: Bool
    ) -> FileSystemEvent {
        let paths = roots[root].paths
        return FileSystemEvent(
            kind: kind,
            path: paths.path(relative),
            previousPath: previous.map(paths.path),
            itemType: type,
            isSynthetic: synthetic,
            identity: identity
        )
    }
}

/// Wall-clock nanoseconds, for comparing with file ctimes after an overflow.
enum WallClock {
    static func wallNanoseconds() -> Int64 {
        FileSystemEvent.Timestamp.now().nanosecondsSinceEpoch
    }
}

#endif
