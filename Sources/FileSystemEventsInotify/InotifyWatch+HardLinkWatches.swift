#if os(Linux)
import Glibc
import FileSystemEventsCore
import SystemPackage

// Files in view with a hard link out of view.
//
// inotify reports a write to the watch of the directory that holds the name the file was
// opened by. A file in the tree whose other name is outside it, or in a directory the filter
// leaves out (excluded, or past the depth limit), can be written through that name, and no
// directory watch of this one hears it; polling sees the new status at the name in view. So
// each such file gets a watch on its own inode, in the table the followed symlinks' targets
// use (`InotifyWatch+FileLinks.swift`), which moves and drops it with the model's names. Its
// `IN_MODIFY` and `IN_ATTRIB` are reported at the file's names in view.
//
// Which files: those whose link count is greater than the number of their names in the model.
// The count comes from `statx`:
//
// - The crawl before `ready` examines each regular file (`statx`, on whichever of its two
//   threads lists the directory: ``InotifyWatch/CrawlState/examinesFiles``), and the files
//   it finds are watched before `ready` is sent. That is the larger part of a start-up's
//   cost (a 110k-entry tree's `ready` about doubles, to about twice the C walk that `statx`es
//   every entry), and the price of a start that misses no write: examined after `ready` instead,
//   a write through a name out of view made in between was told only once the examination
//   reached the file, after events read since, and the first event waited for all of it.
// - While watched, the files the watch examines anyway (a creation, a move in, a crawl of a
//   directory made or moved in, a rescan) with more than one link, and the names left in view
//   when another name of their file leaves it (``HardLinkIndex/takeLeftBehind()``), are checked once
//   the events read with them have been applied (``watchCandidatesOutOfView()``).
// - A file with several links that arrives under a name the filter refuses: its names in
//   view are found by identity in the model (``watchNamesInView(of:)``).
// - An item in view that leaves it before the watch could examine it (a creation not yet
//   examined, a directory never listed) may have been another name of a file in view: every
//   file is examined again (``requestLinkAudit()``).
//
// What no watch of this kind can see: a hard link made out of view (outside the tree, or in
// an excluded directory), while watched, to a file that had one name. `link(2)` tells the new
// name's directory and the file's own watches, and a file with one name has none here (one
// per file in the tree would cost a watch of `fs.inotify.max_user_watches`, and kernel
// memory, per file).
//
// A write through a name in view queues two events, the directory's (with the name) and then
// the inode's (without): the inode's is not reported again when it follows a change reported
// for the same file (``ReportedChange``).

/// A change of content or attributes just reported through a directory's watch, remembered
/// for the one event read after it.
struct ReportedChange {
    let identity: FileIdentity
    let kind: FileSystemEvent.Kind
}

/// How far a change heard by the watch of a file with names out of view has been told at the
/// file's names, in the events gathered for the batcher (``InotifyWatch/produced``).
///
/// Why: that watch hears `IN_ATTRIB` each time the file gains or loses a name, and each was
/// told at every name: a burst of thousands of `ln` of one file cost time quadratic in their
/// number (10,000 took 33 s to tell, one run in three, when the link count ran ahead of the
/// model and the watch was added). The coalescer keeps one `attributesChanged` (or `modified`)
/// per path in what it coalesces together, until a structural event may change what the path
/// names, so a repeat with none between is dropped there: it is not made. Names the file
/// gained since are told (they come last in the watch's list of names), and a name it lost is
/// forgotten (``forget(linkAt:in:)``).
struct LinkFanOut {
    /// How many of the watch's names, in order, a kind of change was told at, and the last of
    /// them, to find out whether the names before it are still the same.
    struct Told {
        var count: Int
        var last: NameInModel
    }

    let watch: CInt
    /// ``InotifyWatch/producedHandOvers`` when it was told.
    let handOvers: Int
    /// How far into ``InotifyWatch/produced`` the events since have been looked at.
    var examined: Int
    var modified: Told?
    var attributesChanged: Told?

    /// The watch's name at `index` of `links` (its list of names, all of a hard-linked file)
    /// is about to go: a name told before it no longer counts, and the names told stay told.
    mutating func forget(linkAt index: Int, in links: [FollowedFileLink]) {
        for kind in [FileSystemEvent.Kind.modified, .attributesChanged] {
            guard var told = self[kind], index < told.count else { continue }
            told.count -= 1
            if told.count == 0 {
                self[kind] = nil
                continue
            }
            if index == told.count {
                // The last told name goes: the one before it is the last now.
                told.last = NameInModel(links[index - 1].directory, links[index - 1].name)
            }
            self[kind] = told
        }
    }

    subscript(kind: FileSystemEvent.Kind) -> Told? {
        get { kind == .modified ? modified : attributesChanged }
        set { if kind == .modified { modified = newValue } else { attributesChanged = newValue } }
    }

    /// Whether the coalescer may keep a repeat made after `event`: where it forgets what was
    /// said of every path (``EventCoalescer/resetsOnlyItsPaths(_:)`` is false), and after a
    /// file's rename, which renames one of the watch's names in place. A file's removal forgets
    /// its own path only: if that was one of the file's names, the watch drops it, and
    /// ``forget(linkAt:in:)`` with it.
    static func resets(after event: FileSystemEvent) -> Bool {
        switch event.kind {
        case .created, .modified, .attributesChanged, .settled: return false
        case .renamed: return true
        case .removed, .exchanged, .overflow, .rootRemoved: return !EventCoalescer.resetsOnlyItsPaths(event)
        }
    }
}


/// A file of the model to check for names out of view.
struct HardLinkCandidate {
    let directory: WatchedDirectory
    let name: [UInt8]
    let inode: UInt64
    /// Wall-clock nanoseconds since when a change of the file found once it is watched is
    /// reported `modified` (it may have been written through the name out of view before the
    /// watch was added); `nil` where the consumer has not been told of the file yet, or has
    /// been told of the change.
    var changedSince: Int64? = nil
    /// The file had a name out of view (moved there, or made where the filter refuses it)
    /// before the event that told of it was read: a change since ``changedSince`` is
    /// reported even where the file needs no watch by now, for that name may have been
    /// written through and gone again since (unlinked, or moved back into view).
    var hadNameOutOfView = false
    /// What the kernel reported changed through this name while its creation waited to be
    /// examined (``InotifyWatch/changesWhilePending``). The name itself is told `created`,
    /// which covers it; a new hard link's other names in view changed too, and are told so
    /// once the index has found them (``InotifyWatch/watchCandidatesOutOfView()``).
    var changesThroughNewName: Set<FileSystemEvent.Kind> = []
    /// Another name of the file was removed while a writer was at work
    /// (``InotifyWatch/linksRemovedWhileWriting``): watched whatever its link count.
    var mayBeWrittenThroughRemovedName = false
}

extension InotifyWatch {
    /// Examines every file of the model for names out of view: those found get a watch of their
    /// own, and those changed since `changedSince` (wall-clock nanoseconds) are reported
    /// `modified`. When an item that may have been such a name left view unexamined
    /// (``requestLinkAudit()``).
    mutating func auditLinks(changedSince: Int64) {
        let start = MonotonicClock.nanoseconds()
        var descent = DescentDescriptors()
        var linkNames = LinkNamesInView()
        for tree in roots.compactMap(\.tree) {
            watchFilesLinkedOutOfView(below: tree, descent: &descent, changedSince: changedSince, linkNames: &linkNames)
        }
        linkAuditEnded = MonotonicClock.nanoseconds()
        linkAuditDuration = linkAuditEnded &- start
    }

    /// An item in view left it before the watch could tell whether it was another name of a
    /// file in view (a creation not yet examined, a directory never listed): every file is
    /// examined again (``auditLinksIfDue()``). Rare: a watch that keeps up examines what it is
    /// told of before it leaves.
    ///
    /// The item came with an event queued after the queue was last found empty before the
    /// read that returned it, or a little earlier (see ``leftBehindLookbackNanoseconds``):
    /// a write through it since then is reported.
    mutating func requestLinkAudit() {
        let since = drainedBeforeRead - Self.leftBehindLookbackNanoseconds
        linkAuditSince = min(linkAuditSince ?? since, since)
    }

    /// Examines every file again if asked to: at once where the last examination took less
    /// than ``immediateLinkAuditLimit``, so that what it finds is told ahead of every later
    /// event; on a tree larger than that, spending at most half the time on it, the changes
    /// it finds told late (after events read meanwhile) but not lost.
    mutating func auditLinksIfDue() {
        guard let since = linkAuditSince else { return }
        if linkAuditDuration > Self.immediateLinkAuditLimit
            && MonotonicClock.nanoseconds() &- linkAuditEnded < linkAuditDuration { return }
        linkAuditSince = nil
        auditLinks(changedSince: since)
    }

    /// The longest examination of every file that is repeated as often as it is asked for
    /// (monotonic nanoseconds): a tree of about 150,000 files in a release build here, and of
    /// about 20,000 in a debug build, loaded.
    static var immediateLinkAuditLimit: UInt64 { 250_000_000 }

    /// Examines the files of `directory` and of every directory below it, each directory
    /// opened relative to its parent where `descent` holds the parent's descriptor.
    private mutating func watchFilesLinkedOutOfView(below directory: WatchedDirectory, descent: inout DescentDescriptors,
                                                    changedSince: Int64, linkNames: inout LinkNamesInView) {
        guard case .opened(let descriptor, _) = open(directory, parentDescriptor: descent.deepest) else { return }
        var subdirectories: [WatchedDirectory] = []
        var files: [([UInt8], UInt64)] = []
        for (name, entry) in directory.children {
            if let child = entry.directory {
                subdirectories.append(child)
            } else if entry.type == .file {
                files.append((Array(name), entry.inode))
            }
        }
        for (name, inode) in files {
            // One `statx` for most files: a file with one link has no other name.
            guard case .success(let status) = withCString(name, { Syscalls.status($0, relativeTo: descriptor) }),
                  status.linkCount > 1, status.inode == inode
            else { continue }
            watchIfLinkedOutOfView(HardLinkCandidate(directory: directory, name: name, inode: inode, changedSince: changedSince),
                                   descriptor: descriptor, linkNames: &linkNames)
        }
        descent.enter(descriptor)
        defer { descent.leave() }
        for child in subdirectories where child.isAttached {
            watchFilesLinkedOutOfView(below: child, descent: &descent, changedSince: changedSince, linkNames: &linkNames)
        }
    }

    /// Finds, in one walk of the model, the names of the files that `examined` creations found
    /// under a name the filter refuses, with more than one link: a name in view of such a
    /// file may now have another out of view, checked as the creation is applied
    /// (``watchNamesInView(of:)``), ahead of the creations after it.
    mutating func findNamesInView(ofFilteredOutLinks examined: [Examination]) {
        var sought: Set<FileIdentity> = []
        for examination in examined {
            if case .filteredOut(let identity?) = examination { sought.insert(identity) }
        }
        namesOfFilteredOutLinks = HardLinkIndex.names(of: sought, in: roots.compactMap(\.tree))
    }

    /// A file with more than one link appeared under a name the filter refuses: its names in
    /// view (``findNamesInView(ofFilteredOutLinks:)``) are checked now.
    mutating func watchNamesInView(of identity: FileIdentity) {
        guard let names = namesOfFilteredOutLinks[identity] else { return }
        let since = drainedBeforeRead - Self.leftBehindLookbackNanoseconds
        watch(names.map { HardLinkCandidate(directory: $0.0, name: $0.1, inode: identity.inode, changedSince: since, hadNameOutOfView: true) })
    }

    /// How far before ``drainedBeforeRead`` a file left with a name out of view is looked for a
    /// change: more than ``mirrorWaitLimit``, the longest half a move waits across reads.
    static var leftBehindLookbackNanoseconds: Int64 { 2_000_000_000 }

    /// Checks the names whose file lost another name in view (``HardLinkIndex/takeLeftBehind()``).
    ///
    /// A name removed by `unlink` while settling, with a write session open
    /// (``linksRemovedWhileWriting``), gets the file a watch of its own even with no name out
    /// of view: a descriptor opened through the removed name still writes the file, and
    /// directory watches do not hear it (they are added with `IN_EXCL_UNLINK`). `ln kept gone`,
    /// a writer opening `gone`, `rm gone`, then writes and a close: `kept` was never told
    /// changed, and never settled, its writer never seen to close (conformance 139).
    mutating func watchNamesLeftBehind() {
        let leftBehind = hardLinks.takeLeftBehind()
        let removedWhileWriting = linksRemovedWhileWriting
        linksRemovedWhileWriting.removeAll()
        if !leftBehind.isEmpty {
            // The other name left view with an event queued after the queue was last found
            // empty before the read that returned it, or read a little earlier still (a move
            // out waits up to a second for its other half, across reads that find the queue
            // empty), and may have been written through since; beneath a held consumer, that
            // can be long ago.
            let since = drainedBeforeRead - Self.leftBehindLookbackNanoseconds
            let candidates = leftBehind.compactMap { directory, name, movedOutOfView -> HardLinkCandidate? in
                guard let entry = directory.children[name], entry.type == .file else { return nil }
                var candidate = HardLinkCandidate(directory: directory, name: name, inode: entry.inode, changedSince: since,
                                                  hadNameOutOfView: movedOutOfView)
                candidate.mayBeWrittenThroughRemovedName = removedWhileWriting.contains(FileIdentity(device: directory.device, inode: entry.inode))
                return candidate
            }
            if (!changesWhilePending.isEmpty || writtenNameGoneSince != nil)
                && survivingLinksOfWrittenFiles.count + candidates.count <= Self.linkSurvivorLimit {
                survivingLinksOfWrittenFiles += candidates
            }
            watch(candidates)
        }
    }

    /// Checks the files noted since the last call (``hardLinkCandidates``), each directory
    /// opened once.
    mutating func watchCandidatesOutOfView() {
        guard !hardLinkCandidates.isEmpty else { return }
        let candidates = hardLinkCandidates
        hardLinkCandidates.removeAll()
        var linkNames = LinkNamesInView()
        // A writer at work through any name is at work at all of them (`SettleTracker.shareWriter`).
        let sharesWriters = settle.map { !$0.isIdle } ?? false
        for candidate in candidates where (sharesWriters || !candidate.changesThroughNewName.isEmpty) && candidate.directory.isAttached {
            // `ln a b; echo x >> b`, both read before `b` was examined: `a` changed too. (Or
            // `ln s t; touch -h t` of a symlink `s`: told as the symlink it is.)
            let identity = FileIdentity(device: candidate.directory.device, inode: candidate.inode)
            let type = candidate.directory.children[candidate.name]?.type ?? .file
            let names = linkNames.names(of: identity, in: hardLinks)
            let paths = names.paths(startingAt: candidate.directory, candidate.name)
            if sharesWriters && type == .file && paths.count > 1 {
                settle!.shareWriter(among: paths.map { roots[$0.0.root].paths.bytes($0.0.relativePath.appendingComponent($0.1)) })
            }
            for (linkDirectory, linkName) in paths.dropFirst() {
                for kind in [FileSystemEvent.Kind.modified, .attributesChanged] where candidate.changesThroughNewName.contains(kind) {
                    produced.append(makeEvent(kind, root: linkDirectory.root, relative: linkDirectory.relativePath.appendingComponent(linkName),
                                              type: type, identity: identity, synthetic: true))
                }
            }
        }
        watch(candidates)
    }

    /// Notes a name of `events` removed or moved onto while its creation waited, after it was
    /// written through (``writtenNameGoneSince``).
    ///
    /// `ln a b; echo x >> b; mv t b` (or `rm b`), all read before `b` is examined: the write
    /// changed `a`, yet `b`'s examination finds `t` or nothing, and `a`'s directory heard
    /// nothing (`link(2)` and the write tell the new name's directory and the file's own
    /// watches only). Which file `b` was, no event says; the disk does, as a change time.
    mutating func noteWrittenNamesGone(_ events: [Inotify.Event]) {
        for event in events where !event.mask.isDisjoint(with: [.delete, .movedTo]) && !event.mask.contains(.isDirectory) {
            guard let directory = liveDirectory(event.watch),
                  changesWhilePending.contains(.modified, for: NameInModel(directory, event.name))
            else { continue }
            noteFilesWritten(since: changesWhilePendingSince)
            return
        }
    }

    /// Notes that a file was written through a name that says nothing of it now (gone, or
    /// never examined), after `time`: the files with several names are looked at for a change
    /// since the earliest such time (``checkFilesWrittenThroughLostNames()``).
    mutating func noteFilesWritten(since time: Int64) {
        writtenNameGoneSince = min(writtenNameGoneSince ?? .max, time)
    }

    /// Looks at each file with several names in the model, or that had several since the
    /// write (``survivingLinksOfWrittenFiles``), for a change since ``writtenNameGoneSince``,
    /// reported `modified` at all its names (synthetic, and perhaps a repeat). A file that had
    /// one name in view before the lost one was made is not looked at: that would take every
    /// file of the tree (see README, "Known limits").
    mutating func checkFilesWrittenThroughLostNames() {
        guard let since = writtenNameGoneSince else { return }
        writtenNameGoneSince = nil
        var candidates = hardLinks.firstNames.map {
            HardLinkCandidate(directory: $0.directory, name: $0.name, inode: $0.inode, changedSince: since, hadNameOutOfView: true)
        }
        for survivor in survivingLinksOfWrittenFiles where survivor.directory.isAttached {
            var candidate = survivor
            candidate.changedSince = since
            candidate.hadNameOutOfView = true
            candidates.append(candidate)
        }
        survivingLinksOfWrittenFiles.removeAll()
        // Grouped by directory: each is opened once.
        candidates.sort { ObjectIdentifier($0.directory) < ObjectIdentifier($1.directory) }
        hardLinkCandidates += candidates
    }

    /// Checks `candidates`, each directory opened once (they come grouped by directory).
    private mutating func watch(_ candidates: [HardLinkCandidate]) {
        var linkNames = LinkNamesInView()
        var open: (directory: WatchedDirectory, descriptor: CInt)?
        defer { if let open { Syscalls.close(open.descriptor) } }
        for candidate in candidates where candidate.directory.isAttached {
            if open?.directory !== candidate.directory {
                if let open { Syscalls.close(open.descriptor) }
                open = nil
                guard case .opened(let descriptor, _) = self.open(candidate.directory) else { continue }
                open = (candidate.directory, descriptor)
            }
            if let open { watchIfLinkedOutOfView(candidate, descriptor: open.descriptor, linkNames: &linkNames) }
        }
    }

    /// Adds a watch on the file at `candidate` if it has more links than names in the model,
    /// for each of those names, and reports it `modified` at those names if it changed since
    /// the candidate's ``HardLinkCandidate/changedSince``: with a watch added, or where it
    /// ``HardLinkCandidate/hadNameOutOfView``.
    ///
    /// The file is opened `O_PATH` without following a symlink, checked through that
    /// descriptor to be the model's file, and watched through `/proc/self/fd`, as a followed
    /// symlink's target is (``watchFileLinkTarget(_:in:linkInode:descriptor:)``).
    ///
    /// - Parameter linkNames: the names in view of the files the pass has looked at so far.
    private mutating func watchIfLinkedOutOfView(_ candidate: HardLinkCandidate, descriptor: CInt, linkNames: inout LinkNamesInView) {
        let (directory, name) = (candidate.directory, candidate.name)
        guard let entry = directory.children[name], entry.inode == candidate.inode, entry.type == .file,
              fileLinkWatches[NameInModel(directory, name)] == nil
        else { return }
        guard case .success(let pinned) = withCString(name, { Syscalls.openPathOnly($0, relativeTo: descriptor, followSymlinks: false) })
        else { return }
        defer { Syscalls.close(pinned) }
        guard case .success(let status) = Syscalls.status(ofDescriptor: pinned), status.itemType == .file,
              status.inode == candidate.inode
        else { return }
        let namesInView = linkNames.names(of: status.identity, in: hardLinks)
        let outOfView = (status.linkCount > 1 && Int(status.linkCount) > namesInView.count(including: directory, name))
            || candidate.mayBeWrittenThroughRemovedName
        guard outOfView || candidate.hadNameOutOfView else { return }
        var watched = false
        if outOfView {
            // The first of the file's new names a pass looks at watches it at every name in view:
            // the others are then passed over by the guard above.
            let unwatched = namesInView.paths(startingAt: directory, name).filter { fileLinkWatches[NameInModel($0.0, $0.1)] == nil }
            watched = addHardLinkWatch(pinned: pinned, status: status, unwatched: unwatched, directory: directory, name: name)
        }
        // Examined again now that the watch is there, so a write between the first look and
        // the watch is not missed. (Without one, the first look serves: the file has no name
        // out of view by then, and a later write is heard in view.) A name that was out of
        // view may have been written through before it was unlinked or moved back into view,
        // all before the event that told of it was read: the file lost a name in view to `mv` beneath a held
        // consumer, the name out of view was appended to and then removed with its directory,
        // and by the time the move was read the file had one name (scenario 113, seed 1505 of
        // `FILEWATCH_CONFORMANCE_FILTERED_MIX_SEEDS=3`).
        guard let changedSince = candidate.changedSince, watched || candidate.hadNameOutOfView else { return }
        let now = watched ? Syscalls.status(ofDescriptor: pinned) : .success(status)
        guard case .success(let changed) = now, changed.changeTime >= changedSince else { return }
        for (linkDirectory, linkName) in namesInView.paths(startingAt: directory, name) {
            produced.append(makeEvent(.modified, root: linkDirectory.root,
                                      relative: linkDirectory.relativePath.appendingComponent(linkName),
                                      type: .file, identity: status.identity, synthetic: true))
        }
    }

    /// Adds the watch on the file open at `pinned` for its names in the model that have none,
    /// `unwatched`; `false` if none was added.
    private mutating func addHardLinkWatch(pinned: CInt, status: FileStatus, unwatched: [(WatchedDirectory, [UInt8])],
                                           directory: WatchedDirectory, name: [UInt8]) -> Bool {
        guard !unwatched.isEmpty else { return false }
        let absolute = roots[directory.root].paths.bytes(directory.relativePath.appendingComponent(name))
        let watch: CInt
        switch addFileWatch(pinned: pinned, path: absolute) {
        case .success(let added):
            watch = added
        case .failure(let errno):
            reportUnwatchableHardLink(absolute, errno: errno)
            return false
        case .none:
            return false
        }
        if let existing = targets[watch], !existing.directories.isEmpty {
            // Not this file's watch (it cannot be, for a regular file); leave the other alone.
            // (A file root's watch on the same file is shared: both hear its events.)
            return false
        }
        for (linkDirectory, linkName) in unwatched {
            targets[watch, default: WatchTargets()].fileLinks.append(
                FollowedFileLink(.hardLink, directory: linkDirectory, name: linkName, inode: status.inode, target: status.identity))
            fileLinkWatches[NameInModel(linkDirectory, linkName)] = watch
        }
        return true
    }

    /// Says once per watch that a file with a name out of view could not be watched, and why.
    private mutating func reportUnwatchableHardLink(_ absolute: [UInt8], errno: Errno) {
        if errno == .noSpace {
            guard !hardLinkWatchLimitReported else { return }
            hardLinkWatchLimitReported = true
            diagnose(.unwatchableHardLink, absolute, errno: errno,
                     "\(FilePath(bytes: absolute)) has a hard link out of the watch's view, and the inotify watch limit is reached (raise the sysctl fs.inotify.max_user_watches); writes through such other names are not reported for it or for further such files")
            return
        }
        diagnose(.unwatchableHardLink, absolute, errno: errno,
                 "cannot watch \(FilePath(bytes: absolute)) (\(errno)), which has a hard link out of the watch's view; writes through that other name are not reported")
    }

    /// An event of the watch on a file with names out of view, for its `links` in the model.
    /// A change the event just before told through a directory's watch for the same file
    /// (``changeBeforeThisEvent``) is not told again.
    mutating func handleHardLinkedFile(_ event: Inotify.Event, _ links: [FollowedFileLink]) {
        guard let first = links.first else { return }
        let mask = event.mask
        if mask.contains(.modify) && !isRepeat(.modified, of: first.target) {
            tellAtEveryName(.modified, event.watch, links)
        }
        if mask.contains(.attrib) {
            if !isRepeat(.attributesChanged, of: first.target) {
                tellAtEveryName(.attributesChanged, event.watch, links)
            }
            // The link count moved, perhaps: a file with no name out of view any more needs no
            // watch of its own. (More links than the index has names, some perhaps gone, and
            // one is out of view still: told without looking each name up.)
            if case .success(let status) = statusOfChild(first.name, in: first.directory), status.inode == first.inode,
               Int(status.linkCount) <= hardLinks.knownPathCount(of: first.target) + 1,
               Int(status.linkCount) <= hardLinks.paths(of: first.target, at: first.directory, first.name).count {
                dropFileLinks(links)
            }
        }
        if mask.contains(.deleteSelf) {
            // Every name is gone; the names in view were removed by their directories' events.
            dropFileLinks(links)
        }
    }

    /// Tells `kind` at each of `links`, the names of the file `watch` is on, but for those the
    /// events gathered since the last hand-over told it at already (``LinkFanOut``).
    private mutating func tellAtEveryName(_ kind: FileSystemEvent.Kind, _ watch: CInt, _ links: [FollowedFileLink]) {
        var fanOut: LinkFanOut?
        if settle == nil, var last = lastLinkFanOut, last.watch == watch, last.handOvers == producedHandOvers,
           last.examined <= produced.count, !produced[last.examined...].contains(where: LinkFanOut.resets(after:)) {
            last.examined = produced.count
            fanOut = last
        }
        var start = 0
        if let told = fanOut?[kind], told.count <= links.count,
           NameInModel(links[told.count - 1].directory, links[told.count - 1].name) == told.last {
            start = told.count
        }
        for link in links[start...] { report(kind, link) }
        guard settle == nil, let last = links.last else { return }
        var updated = fanOut ?? LinkFanOut(watch: watch, handOvers: producedHandOvers, examined: produced.count)
        updated[kind] = LinkFanOut.Told(count: links.count, last: NameInModel(last.directory, last.name))
        updated.examined = produced.count
        lastLinkFanOut = updated
    }

    /// Whether the event just before this one told `kind` for `identity` through a directory's
    /// watch: the same write or change, heard by the file's own watch too.
    func isRepeat(_ kind: FileSystemEvent.Kind, of identity: FileIdentity) -> Bool {
        changeBeforeThisEvent?.identity == identity && changeBeforeThisEvent?.kind == kind
    }
}
#endif
