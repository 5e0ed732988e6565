#if os(Linux)
import Glibc
import CFileSystemEventsShims
import FileSystemEventsCore
import SystemPackage

extension InotifyWatch {
    /// Watches a root and crawls it; the initial state, reported by no event.
    ///
    /// A root is what the user named: a symlink to a directory is followed (and paths are
    /// reported under the name as given).
    mutating func addRoot(_ path: FilePath, index: Int) throws(FileSystemEventsError) {
        let bytes = path.bytes
        let status: FileStatus
        switch Syscalls.status(atPath: bytes, followSymlinks: true) {
        case .success(let found): status = found
        case .failure(let errno): throw .forRoot(path, call: "statx", errno: errno)
        }
        if status.itemType == .directory {
            let tree = WatchedDirectory(parent: nil, name: [], root: index, device: status.device, inode: status.inode)
            var root = WatchedRoot(path: path, paths: PathBuilder(root: path), bytes: bytes, device: status.device, kind: .directory(tree))
            if options.followsSymlinks { root.identitiesAbove = Syscalls.identitiesAbove(directoryAt: bytes) }
            roots.append(root)
            var crawlState = CrawlState()
            crawlState.examinesFiles = true
            crawlState.ancestors.insert(FileIdentity(device: status.device, inode: status.inode))
            crawlState.ancestors.formUnion(root.identitiesAbove)
            if settle != nil { crawlState.presentFiles = [] }
            if settle == nil, options.filter.isEmpty, !options.followsSymlinks, options.isRecursive, ProcessDescriptors.areVisible,
               CrawlPrefetcher.hasProcessorsToOverlap,
               let add = kernel?.concurrentWatchAdder
            {
                var mask = watchMask
                mask.remove(.dontFollow)  // the magic link of `/proc/self/fd` must be followed (see `addWatch`)
                crawlState.prefetcher = CrawlPrefetcher.start(
                    rootPath: bytes, adder: .init(mask: mask, add: add),
                    maximumHeldDescriptors: ProcessDescriptors.startUpBudget(), examinesFiles: crawlState.examinesFiles)
            }
            crawl(tree, emitting: false, state: &crawlState)
            stopPrefetching(&crawlState)
            if let failure = crawlState.failure { throw failure }
            for file in crawlState.presentFiles ?? [] {
                presentAtReady.append((index, file.relative, file.status))
            }
            if tree.watch < 0 {
                if pendingCrawls.contains(where: { $0 === tree }) {
                    throw .forRoot(path, call: "open", errno: .noSuchFileOrDirectory)
                }
                throw .permissionDenied(path, operation: "watch")
            }
            pendingCrawls.removeAll { $0 === tree }
            registerLinks(foundBy: crawlState, in: tree)
        } else {
            try addFileRoot(path, index: index, status: status)
            if settle != nil && status.itemType == .file { presentAtReady.append((index, [], status)) }
        }
    }

    /// What one crawl collects besides the tree.
    struct CrawlState {
        var failure: FileSystemEventsError?
        /// One batch buffer for every directory of the crawl: a listing is read whole before
        /// the crawl descends.
        let reader = DirectoryEntryReader()
        /// The inode of every file met (and of every other item but a directory, which may
        /// have hard links too), to find hard links within the tree once the crawl is
        /// done. Inode numbers only, not places: sorting them once costs less than hashing
        /// every file as it is met (the dictionary's hashing and growth were 15% of a
        /// 110k-entry start-up in a profile), and keeping 8 bytes a file instead of a place
        /// and a name was most of a start-up's transient heap. The places of the few repeated
        /// inodes are found again in the model (``InotifyWatch/hardLinkCandidates(in:_:)``).
        var fileInodes: [UInt64] = []

        /// The inode numbers met more than once.
        var repeatedInodes: Set<UInt64> {
            guard fileInodes.count > 1 else { return [] }
            var inodes = fileInodes
            inodes.sort()
            var repeated: Set<UInt64> = []
            for index in 1..<inodes.count where inodes[index] == inodes[index - 1] { repeated.insert(inodes[index]) }
            return repeated
        }
        /// Set during a rescan after lost events: items other than directories (files,
        /// symlinks, FIFOs, ...) whose ctime is at or after this moment (wall-clock ns) changed
        /// while events were being lost.
        var changedSince: Int64?
        var changed: [(directory: WatchedDirectory, name: [UInt8], content: Bool)] = []
        /// Set when the crawl adds to a model that has other places already (a directory
        /// created or moved in, a rescan): each file is examined for its link count, since a
        /// link's other names may lie outside the crawled subtree, where the repeated inodes
        /// of ``fileInodes`` cannot see them (a tree moved out and back, or a `link(2)` whose
        /// two paths were resolved on either side of a rename of their directory).
        var findsLinks = false
        /// Set for a start-up's crawl: each regular file is examined (`statx`) for its link
        /// count, so that a file with a name out of view is watched on its own before `ready`
        /// (see `InotifyWatch+HardLinkWatches.swift`). Unlike ``findsLinks``, directories are
        /// not examined: nothing at a start-up is compared with a model.
        var examinesFiles = false
        /// The files found with more than one link, when ``findsLinks`` or ``examinesFiles``
        /// is set.
        var linkedFiles: [(directory: WatchedDirectory, name: [UInt8], identity: FileIdentity, linkCount: UInt32)] = []
        /// Directories on the current descent (following symlinks), against loops.
        var ancestors: Set<FileIdentity> = []

        /// Puts `directory` and every directory above it in the model into ``ancestors``: a
        /// crawl that starts below the root (a directory made, moved in, or reached through a
        /// symlink that appeared after `ready`) is on their path too. Seeded with nothing, a
        /// link below a new `toA -> a` back to `a` (`a/b/up -> ..`) was entered once more, as
        /// `toA/b/up/b`, where the start-up crawl and the other backends report the symlink.
        /// The directories above the root (`above`) are on that path as well.
        mutating func noteAncestors(from directory: WatchedDirectory, above: [FileIdentity]) {
            ancestors.formUnion(above)
            var current: WatchedDirectory? = directory
            while let node = current {
                if node.inode != 0 { ancestors.insert(FileIdentity(device: node.device, inode: node.inode)) }
                current = node.parent
            }
        }
        /// The descriptors of the directories on the way down, held for opening their
        /// subdirectories by name. While a ``CrawlPrefetcher`` runs, the crawl holds none
        /// itself: the prefetcher holds them, within ``ProcessDescriptors/startUpBudget()``.
        var descent = DescentDescriptors()
        /// Set (empty) for the initial crawl when settling: the regular files found, with
        /// their status, to be settled at `ready` (``SettleTracker/presentAtReady``).
        var presentFiles: [(relative: [UInt8], status: FileStatus)]?
        /// Set for a start-up's crawl that another thread opens, watches and lists for
        /// (``CrawlPrefetcher``); `nil` if never started, once the two are out of step, and
        /// while the crawl is below a directory the prefetcher left it to list.
        var prefetcher: CrawlPrefetcher?
        /// Watches the prefetcher added for directories the crawl did not take. Released, where
        /// no node holds them, only once the prefetcher has stopped: until then it may hand
        /// over the same watch (the same directory) at a place the crawl does take.
        var prefetchedWatchesNotTaken: [CInt] = []
        /// How far below the crawled directory the crawl is: the prefetcher's check.
        var depth = 0
    }

    /// What opening a directory of the model at the path the model gives it found.
    enum Opening {
        /// The directory the model means, open for listing.
        case opened(CInt, FileStatus)
        /// Nothing, or another item, stands at that path now: the model is behind the disk
        /// (events still queued in the kernel will move it on), or the item is gone.
        case stale
        /// The directory is there but may not be opened (permissions).
        case inaccessible(Errno)

        /// What an `open` of the directory that failed with `errno` says: gone or replaced
        /// (a rename still queued explains it), or there and not to be opened.
        static func failed(_ errno: Errno) -> Opening {
            switch errno {
            case .noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinkLevels: return .stale
            default: return .inaccessible(errno)
            }
        }
    }

    /// Opens `directory` and checks its identity, so nothing the model believes about a path
    /// is trusted after the kernel may have moved it.
    ///
    /// A crawl passes the descriptor of the parent it has just listed: the name is then looked
    /// up in that one directory, not along the whole path again (which also keeps a crawl
    /// right while a directory above it is renamed: the rename is in the queue and moves the
    /// node). Otherwise the directory is opened at the path the model derives for it, at any
    /// depth (see `Syscalls.openDirectory(atPath:followSymlinks:)`).
    ///
    /// - Parameter identityFromListing: the node's identity is the parent's device and the
    ///   listing's `d_ino`, not examined. That is the directory's identity except at a mount
    ///   point, where `d_ino` is the covered directory's: a directory found to be the root of a
    ///   mount (by its device, or `STATX_ATTR_MOUNT_ROOT` for a bind mount) takes the identity
    ///   found there. Any other mismatch is a directory replaced since the listing, and the
    ///   node is stale, as when the listing examined it.
    ///
    /// - Parameter forLookupOnly: the directory is only to look names up in (`O_PATH`), not
    ///   to be listed: cheaper to open and close (no file operations, no `IN_OPEN` and
    ///   `IN_CLOSE_NOWRITE` for every watch on it to filter), which is what an examination of
    ///   a created name costs between the event and its report.
    func open(_ directory: WatchedDirectory, expectingIdentity: Bool = true,
              parentDescriptor: CInt = -1, identityFromListing: Bool = false, forLookupOnly: Bool = false) -> Opening {
        let follow = options.followsSymlinks || directory.isRoot
        let opened: Result<CInt, Errno>
        if parentDescriptor >= 0 {
            opened = withCString(directory.name) {
                Syscalls.openDirectory($0, relativeTo: parentDescriptor, followSymlinks: follow, forLookupOnly: forLookupOnly)
            }
        } else {
            let absolute = roots[directory.root].paths.bytes(directory.relativePath)
            opened = Syscalls.openDirectory(atPath: absolute, followSymlinks: follow, forLookupOnly: forLookupOnly)
        }
        let descriptor: CInt
        switch opened {
        case .success(let fd): descriptor = fd
        case .failure(let errno): return .failed(errno)
        }
        guard case .success(let (status, isMountRoot)) = Syscalls.statusAndMountRoot(ofDescriptor: descriptor),
              accepts(directory, status: status, isMountRoot: isMountRoot, expectingIdentity: expectingIdentity,
                      identityFromListing: identityFromListing)
        else {
            Syscalls.close(descriptor)
            return .stale
        }
        return .opened(descriptor, status)
    }

    /// Whether the directory opened for `directory`, found to have `status`, is the one the
    /// model means (see ``open(_:expectingIdentity:parentDescriptor:identityFromListing:)``);
    /// takes a mount's identity and marks a mount's root as hearing its own attributes.
    func accepts(_ directory: WatchedDirectory, status: FileStatus, isMountRoot: Bool, expectingIdentity: Bool,
                 identityFromListing: Bool) -> Bool {
        // The parent's watch sees what a mount covers, not the mounted directory.
        let isMountedHere = !directory.isRoot && (isMountRoot || status.device != (directory.parent?.device ?? status.device))
        if expectingIdentity && directory.inode != 0 && (status.inode != directory.inode || status.device != directory.device) {
            guard identityFromListing && isMountedHere else { return false }
            directory.device = status.device
            directory.inode = status.inode
        }
        if isMountedHere { directory.hearsOwnAttributes = true }
        return true
    }

    /// Adds the inotify watch for the directory open at `descriptor`. Through
    /// `/proc/self/fd`, the watch lands on exactly the directory that was opened and checked,
    /// whatever has happened to its path since, and the path is short at any depth.
    mutating func addWatch(descriptor: CInt, absolute: () -> [UInt8]) -> Result<CInt, Errno> {
        var mask = watchMask
        let path: [UInt8]
        if ProcessDescriptors.areVisible {
            // The magic link must be followed to reach the directory; the directory itself was
            // opened without following a final symlink where that matters.
            mask.remove(.dontFollow)
            path = Syscalls.processDescriptorPath(descriptor)
        } else {
            path = absolute()
        }
        return addKernelWatch(path: path, mask: mask)
    }

    /// `inotify_add_watch`. Where the watch limit is reached while released watches still wait
    /// for their removal (``releasedWatches``), those go at once and the watch is tried again:
    /// a subtree moved out and one as large moved in would otherwise count twice against
    /// `fs.inotify.max_user_watches` for a moment (at the price of the overflow that removing
    /// them all at once may cause).
    mutating func addKernelWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        let result = kernel?.addWatch(path: path, mask: mask) ?? .failure(.badFileDescriptor)
        guard case .failure(.noSpace) = result, !releasedWatches.isEmpty else { return result }
        while !releasedWatches.isEmpty { removeReleasedWatches() }
        return kernel?.addWatch(path: path, mask: mask) ?? .failure(.badFileDescriptor)
    }

    mutating func crawl(_ directory: WatchedDirectory, emitting: Bool) {
        var state = CrawlState()
        state.findsLinks = emitting
        state.noteAncestors(from: directory, above: roots[directory.root].identitiesAbove)
        crawl(directory, emitting: emitting, state: &state)
        if let failure = state.failure, failure != pendingFailure {
            pendingFailure = failure
        }
        registerLinks(foundBy: state, in: directory)
    }

    /// Open, watch, then list: the watch exists before the listing is read, so anything
    /// created in between is either in the listing or reported by the kernel (and then
    /// deduplicated by name and identity), never lost.
    ///
    /// A directory's descriptor is held while its subdirectories are crawled (the deepest
    /// ``CrawlState/maximumHeldDescriptors`` of the descent), so each is opened by its name alone.
    /// At start-up a ``CrawlPrefetcher`` may open, watch and list instead, on a thread of its
    /// own and with that budget; the crawl then takes what it found, in the same order, and
    /// makes every decision on it as it would have on its own.
    ///
    /// - Parameters:
    ///   - parentDescriptor: the parent's open descriptor, or -1 to open at the model's path.
    ///   - identityFromListing: see ``open(_:expectingIdentity:parentDescriptor:identityFromListing:)``.
    mutating func crawl(_ directory: WatchedDirectory, emitting: Bool, state: inout CrawlState,
                        parentDescriptor: CInt = -1, identityFromListing: Bool = false) {
        guard state.failure == nil else { return }
        let root = directory.root
        let opened: (listing: DirectoryListing, listedAt: Int64, descriptor: CInt, prefetched: Bool)?
        if state.prefetcher != nil {
            opened = takePrefetched(directory, state: &state, identityFromListing: identityFromListing)
        } else {
            opened = openWatchAndList(directory, state: &state, parentDescriptor: parentDescriptor, identityFromListing: identityFromListing)
                .map { ($0.listing, $0.listedAt, $0.descriptor, false) }
        }
        guard let (listing, listedAt, descriptor, prefetched) = opened else { return }
        // Below a directory the prefetcher left for the crawl to list, the crawl goes on by
        // itself; it takes from the prefetcher again once back above it.
        let prefetcher = state.prefetcher
        if !prefetched { state.prefetcher = nil }
        defer { if !prefetched && state.prefetcher == nil { state.prefetcher = prefetcher } }
        state.descent.enter(descriptor)
        defer { state.descent.leave() }
        directory.isListed = true
        directory.listedAt = listedAt
        let filter = options.filter
        // The path is derived only where it is needed: a start-up with no filter reports no
        // event and joins no path.
        let relative = filter.isEmpty && !emitting && state.presentFiles == nil ? [] : directory.relativePath
        // One table of the final size, not one per doubling: hashing the names again at each
        // growth was a visible part of a start-up profile. (With a filter, most entries may
        // be left out, and the table would keep the room for good.)
        if filter.isEmpty { directory.children.reserveCapacity(listing.entries.count, nameBytes: listing.names.count) }
        for item in listing.entries {
            var type = item.type
            var identity = FileIdentity(device: directory.device, inode: item.inode)
            if let found = item.status {
                type = found.itemType
                identity = found.identity
            }
            // A link back to a directory on the way down is a loop: reported as the symlink it
            // is, never entered (every backend agrees on this).
            if item.isSymlink && type == .directory && state.ancestors.contains(identity) {
                type = .symlink
                identity = FileIdentity(device: directory.device, inode: item.inode)
            }
            // The name is copied out of the listing, and the path joined, only where they are
            // needed: most entries of a start-up are files with no filter to apply and no event
            // to report, and go straight from the listing into the directory's table.
            if !filter.isEmpty {
                let name = listing.name(of: item)
                let path = relative.appendingComponent(name)
                guard filter.admits(relativePath: path, name: name, isDirectory: type == .directory) else { continue }
            }
            if let existing = listing.withName(of: item, { directory.children.entry(named: $0) }),
               existing.inode == identity.inode, existing.type == type
            {
                continue
            }
            if item.linksToFile && !followFileLink(listing.name(of: item), in: directory, linkInode: identity.inode) {
                type = .symlink  // no file behind it by now
            }
            var entry = WatchedEntry(type: type, inode: identity.inode)
            if emitting {
                let path = relative.appendingComponent(listing.name(of: item))
                produced.append(makeEvent(.created, root: root, relative: path, type: type, identity: identity, synthetic: true))
            }
            if type == .file {
                // A file examined with one link is no hard link of another met in this crawl:
                // one linked since has a name examined after the link, with two, and is found
                // through ``CrawlState/linkedFiles``. Only the rest are sorted at the end, on one
                // thread while the other is done: 110,101 inodes at the end of a start-up. A
                // followed symlink's status is its target's, whose links are not the symlink's.
                if item.linksToFile || item.status.map({ $0.linkCount > 1 }) ?? true { state.fileInodes.append(identity.inode) }
                if state.findsLinks || state.examinesFiles, !item.linksToFile, let found = item.status, found.linkCount > 1 {
                    state.linkedFiles.append((directory, listing.name(of: item), identity, found.linkCount))
                }
                if state.presentFiles != nil, let found = item.status {
                    state.presentFiles!.append((relative.appendingComponent(listing.name(of: item)), found))
                }
            } else if type != .directory {
                // A symlink, a FIFO, a socket or a device node: `link(2)` does not follow a
                // symlink, so these have hard links too, and a change of attributes (`lutimes`,
                // `chmod`) is reported at the name it was made through only. Their inodes join
                // the files' for the names met more than once, and those examined with more
                // than one link are looked for elsewhere in the model, as files are: the index
                // then tells the change at every name (``HardLinkIndex``). (No watch of their
                // own for a name out of view: `InotifyWatch+HardLinkWatches.swift` is for
                // regular files.) Only a status of the item itself counts: a symlink that
                // loops back to a directory on the way down has its target's.
                let own = item.status.flatMap { $0.itemType == type ? $0 : nil }
                if own.map({ $0.linkCount > 1 }) ?? true { state.fileInodes.append(identity.inode) }
                if state.findsLinks || state.examinesFiles, let own, own.linkCount > 1 {
                    state.linkedFiles.append((directory, listing.name(of: item), identity, own.linkCount))
                }
            }
            // Every item changed since the queue was last known empty is told changed: the model
            // keeps no times, so the rescan's diff (``SnapshotDiff``) of the old and new models
            // sees types and inodes, never an attribute. Told for files only, a symlink's
            // `lutimes` (or a FIFO's `chmod`) lost to an overflow was never told, and a listing
            // kept the old time for good (200 symlinks and 200 files given a time in 1990
            // through an overflow: 34 to 143 symlinks stale in 4 runs of 5, every file right);
            // a directory's, the same (a live listing's row of a directory kept its old time in
            // 6 runs of 20 on inotifytools). A directory's time also moves when an entry is made
            // or removed in it, which is told `modified` only where directories' own changes are
            // asked for (``WatchOptions/reportsDirectoryContentChanges``); elsewhere a moved
            // time is told `attributesChanged`, as `IN_ATTRIB` tells a `touch`: more than was
            // lost where only entries changed, never less. Only where the status is the entry's
            // own: a symlink that loops back to a directory on the way down, or whose file went
            // between the listing and its watch, has its target's.
            if let since = state.changedSince, let found = item.status, found.itemType == type, found.changeTime >= since {
                let content = found.modificationTime >= since && (type != .directory || options.reportsDirectoryContentChanges)
                state.changed.append((directory, listing.name(of: item), content))
            }
            if type == .directory && options.isRecursive {
                let name = listing.name(of: item)
                if filter.isEmpty || filter.descends(intoDirectoryAt: relative.appendingComponent(name)) {
                    let child = WatchedDirectory(parent: directory, name: name, root: root, device: identity.device, inode: identity.inode)
                    entry.directory = child
                    directory.children[name] = entry
                    state.ancestors.insert(identity)
                    state.depth += 1
                    crawl(child, emitting: emitting, state: &state, parentDescriptor: state.descent.deepest,
                          identityFromListing: item.status == nil)
                    state.depth -= 1
                    state.ancestors.remove(identity)
                    if child.inode != identity.inode {
                        // A mount point: its `d_ino` was the covered directory's.
                        entry.inode = child.inode
                        directory.children[name] = entry
                    }
                    // Reached through a followed symlink: the parent's watch hears of the link.
                    if item.isSymlink { child.hearsOwnAttributes = true }
                    continue
                }
            }
            listing.withName(of: item) { directory.children.update($0, to: entry) }
        }
    }

    /// Opens, watches and lists `directory` (see ``crawl(_:emitting:state:parentDescriptor:identityFromListing:)``);
    /// `nil` when it is not listed now, which is dealt with here. The descriptor is still open.
    private mutating func openWatchAndList(_ directory: WatchedDirectory, state: inout CrawlState, parentDescriptor: CInt,
                                           identityFromListing: Bool) -> (listing: DirectoryListing, listedAt: Int64, descriptor: CInt)? {
        let root = directory.root
        let descriptor: CInt
        let status: FileStatus
        switch open(directory, parentDescriptor: parentDescriptor, identityFromListing: identityFromListing) {
        case .opened(let fd, let found):
            descriptor = fd
            status = found
        case let unopened:
            noteNotOpened(directory, unopened, state: &state)
            return nil
        }
        if directory.inode == 0 {
            directory.device = status.device
            directory.inode = status.inode
        }
        let watch: CInt
        let paths = roots[root].paths
        switch addWatch(descriptor: descriptor, absolute: { paths.bytes(directory.relativePath) }) {
        case .success(let found): watch = found
        case .failure(let errno):
            Syscalls.close(descriptor)
            noteWatchFailure(errno, for: directory, state: &state)
            return nil
        }
        guard takeWatch(watch, for: directory) else {
            Syscalls.close(descriptor)
            return nil
        }

        let listing: DirectoryListing
        let listedAt = WallClock.wallNanoseconds()
        let statEach = state.changedSince != nil || state.presentFiles != nil || state.findsLinks
        // A subdirectory's identity comes from opening it, which the crawl does next anyway;
        // examining it in the listing as well was a `statx` per directory. Where the listing
        // is compared with a model that has entries already (`statEach`), or symlinks are
        // followed (loops are found by identity before descending), it is examined there.
        let examinesDirectories = statEach || options.followsSymlinks
        switch DirectoryListing.read(descriptor: descriptor, with: state.reader, statEach: statEach,
                                     examinesDirectories: examinesDirectories, examinesFiles: state.examinesFiles,
                                     followSymlinks: options.followsSymlinks) {
        case .success(let found): listing = found
        case .failure(let errno):
            Syscalls.close(descriptor)
            reportInaccessible(directory, errno: errno)
            return nil
        }
        return (listing, listedAt, descriptor)
    }

    /// The same for a start-up's crawl, from what the ``CrawlPrefetcher`` opened, watched and
    /// listed: every decision of ``openWatchAndList(_:state:parentDescriptor:identityFromListing:)``
    /// is made here on its results. The descriptor returned, if any, is open; `prefetched` says
    /// whether the prefetcher went on below the directory (it did not where it left the listing
    /// to the crawl).
    private mutating func takePrefetched(_ directory: WatchedDirectory, state: inout CrawlState, identityFromListing: Bool)
        -> (listing: DirectoryListing, listedAt: Int64, descriptor: CInt, prefetched: Bool)?
    {
        guard let prefetcher = state.prefetcher,
              let listed = prefetcher.take(name: directory.name, depth: state.depth)
        else {
            // Out of step (a listing that named a directory twice, say): the crawl lists for
            // itself from here on, opening by path.
            stopPrefetching(&state)
            return openWatchAndList(directory, state: &state, parentDescriptor: -1, identityFromListing: identityFromListing)
                .map { ($0.listing, $0.listedAt, $0.descriptor, false) }
        }
        // A descriptor handed over is this function's to close, unless it returns it.
        var owned: CInt = -1
        // The prefetcher went on below a directory it listed; that is of use only if the
        // crawl enters it too.
        var isEntered = false
        defer {
            if owned >= 0 { Syscalls.close(owned) }
            if !isEntered { state.prefetchedWatchesNotTaken += prefetcher.skipDescendants(below: state.depth) }
        }
        let status: FileStatus
        switch listed.opening {
        case .failed(let errno):
            noteNotOpened(directory, .failed(errno), state: &state)
            return nil
        case .unexamined:
            pendingCrawls.append(directory)
            return nil
        case .opened(let found, let isMountRoot, let descriptor):
            owned = descriptor
            guard accepts(directory, status: found, isMountRoot: isMountRoot, expectingIdentity: true, identityFromListing: identityFromListing) else {
                if case .success(let watch)? = listed.watch { state.prefetchedWatchesNotTaken.append(watch) }
                pendingCrawls.append(directory)
                return nil
            }
            status = found
        }
        if directory.inode == 0 {
            directory.device = status.device
            directory.inode = status.inode
        }
        switch listed.watch {
        case .success(let watch)?:
            guard takeWatch(watch, for: directory) else { return nil }
        case .failure(let errno)?:
            noteWatchFailure(errno, for: directory, state: &state)
            return nil
        case nil:
            pendingCrawls.append(directory)  // not reached: a directory examined is watched
            return nil
        }
        let found: Result<DirectoryListing, Errno>
        var listedAt = listed.listedAt
        if let prefetched = listed.listing {
            found = prefetched
        } else {
            // Left for the crawl to list (no subdirectory when the prefetcher looked).
            guard owned >= 0 else { return nil }  // not reached: such a descriptor is handed over
            listedAt = WallClock.wallNanoseconds()
            found = DirectoryListing.read(descriptor: owned, with: state.reader, statEach: false, examinesDirectories: false,
                                          examinesFiles: state.examinesFiles, followSymlinks: false)
        }
        switch found {
        case .success(let listing):
            isEntered = true
            guard listed.listing == nil else { return (listing, listedAt, -1, true) }  // its subdirectories come opened
            let descriptor = owned
            owned = -1
            return (listing, listedAt, descriptor, false)
        case .failure(let errno):
            reportInaccessible(directory, errno: errno)
            return nil
        }
    }

    /// What a crawl does with a directory it could not open (by itself, or through the
    /// prefetcher), so that both paths decide alike.
    private mutating func noteNotOpened(_ directory: WatchedDirectory, _ opening: Opening, state: inout CrawlState) {
        switch opening {
        case .opened:
            break  // not a failure; never passed here
        case .stale:
            // Not at this path now: deleted (its removal follows in the queue), or moved by an
            // event not read yet. Looked at again once the queue has been read.
            pendingCrawls.append(directory)
        case .inaccessible(let errno) where FileSystemEventsError.isDescriptorShortage(errno):
            // Not the directory's fault, and it would never be retried: left unlisted, its
            // contents would be missing from the model for good. The watch stops, saying why.
            let path = roots[directory.root].paths.bytes(directory.relativePath)
            state.failure = .systemCallFailed(call: "open", path: FilePath(bytes: path), errno: errno)
        case .inaccessible(let errno):
            reportInaccessible(directory, errno: errno)
        }
    }

    /// What a failure to watch a directory the crawl opened means: gone or replaced since (a
    /// rename in the queue explains it), not to be read, or a limit that ends the watch.
    private mutating func noteWatchFailure(_ errno: Errno, for directory: WatchedDirectory, state: inout CrawlState) {
        switch errno {
        case .noSuchFileOrDirectory, .notDirectory:
            pendingCrawls.append(directory)
        case .permissionDenied:
            reportInaccessible(directory, errno: errno)
        default:
            state.failure = watchFailure(errno, path: roots[directory.root].paths.bytes(directory.relativePath))
        }
    }

    /// Gives `directory` the watch the kernel returned for it; `false` if it is to wait instead.
    private mutating func takeWatch(_ watch: CInt, for directory: WatchedDirectory) -> Bool {
        register(directory, watch: watch)
        if let holder = otherHolder(of: watch, than: directory) {
            // The kernel gives one watch per directory, and another node of the model holds
            // this one: the same directory stands at two places of the model. Usually a rename
            // still in the queue will move the other node here, so this one waits. Once the
            // queue has been read, the stale one of the two is found by identity.
            if isResolvingDrained && kernel?.hasPendingEvents() != true {
                _ = evictIfStale(holder)  // or both are real (a bind mount), and both keep the watch
            } else {
                targets[watch]?.directories.removeAll { $0 === directory }
                directory.watch = -1
                pendingCrawls.append(directory)
                return false
            }
        }
        if !reportedUnreadable.isEmpty { reportedUnreadable.remove(roots[directory.root].paths.bytes(directory.relativePath)) }
        return true
    }

    /// Ends a prefetched crawl: stops the prefetcher's thread and releases the watches it added
    /// that the model does not hold.
    mutating func stopPrefetching(_ state: inout CrawlState) {
        guard let prefetcher = state.prefetcher else { return }
        state.prefetcher = nil
        releaseUnheld(state.prefetchedWatchesNotTaken + prefetcher.finish())
        state.prefetchedWatchesNotTaken = []
        // The listings were allocated on the prefetcher's thread, in a malloc arena of its own,
        // and freed here: the memory stays with that arena, resident, unless handed back. After
        // a 110k-entry start-up, the median of 7 runs with and without this call: 7.9 against
        // 8.5 MB of anonymous memory (VmRSS 17.2 against 17.7 MB).
        MemoryRelease.returnFreedPages()
    }

    /// Removes those of `watches` that no node of the model holds: a prefetcher added them for
    /// directories the crawl did not take.
    private mutating func releaseUnheld(_ watches: [CInt]) {
        for watch in watches where targets[watch] == nil {
            releasedWatches.append(watch)
        }
    }

    /// A directory whose contents cannot be read: reported once (again only after it has
    /// been readable in between), and marked incomplete, so that the `IN_ATTRIB` of the
    /// `chmod` that makes it readable again has it rescanned.
    ///
    /// - Parameter keepingListing: the model's listing of it stays (what it holds is known,
    ///   but a change in it could not be confirmed); marked ``WatchedDirectory/isKeptWhileUnreadable``
    ///   rather than unlisted, so that a rescan while it is still closed keeps its contents.
    mutating func reportInaccessible(_ directory: WatchedDirectory, errno: Errno, keepingListing: Bool = false) {
        if keepingListing && directory.isListed {
            directory.isKeptWhileUnreadable = true
        } else {
            directory.isListed = false
        }
        mayHoldUnexamined = true
        let absolute = roots[directory.root].paths.bytes(directory.relativePath)
        diagnose(.unreadableDirectory, absolute, errno: errno,
                 "cannot read \(FilePath(bytes: absolute)) (\(errno)); its contents are not reported until it becomes readable")
    }

    /// The node other than `directory` that holds `watch` in the same root, if any. Following
    /// symlinks, one directory may legitimately stand at several paths, so none counts.
    func otherHolder(of watch: CInt, than directory: WatchedDirectory) -> WatchedDirectory? {
        guard !options.followsSymlinks, let target = targets[watch] else { return nil }
        return target.directories.first { $0 !== directory && $0.root == directory.root && $0.isAttached }
    }

    /// Once the queue is read, a node whose path no longer leads to its directory is stale:
    /// the model missed its move. It leaves the model (reported removed), and its directory is
    /// reported where it is now. Returns `false` if the node is still right (a bind mount).
    mutating func evictIfStale(_ node: WatchedDirectory) -> Bool {
        switch open(node) {
        case .opened(let fd, _):
            Syscalls.close(fd)
            return false
        case .inaccessible:
            return false  // cannot tell (permissions, no descriptor left): kept, not reported removed
        case .stale:
            break
        }
        guard let parent = node.parent, let entry = parent.children[node.name], entry.directory === node else { return false }
        let path = node.relativePath
        parent.children[node.name] = nil
        unwatch(node)
        produced.append(makeEvent(.removed, root: node.root, relative: path, type: .directory,
                                  identity: FileIdentity(device: node.device, inode: node.inode), synthetic: true))
        // The name may hold another item now (`mv a t; mkdir -p a/x; mv t a` failing, then
        // more moves): nothing queued will say so.
        evictedNames.append((parent, node.name))
        return true
    }

    /// Maps `watch` to `directory`.
    mutating func register(_ directory: WatchedDirectory, watch: CInt) {
        directory.watch = watch
        var target = targets[watch] ?? WatchTargets()
        target.directories.removeAll { $0 === directory }
        target.directories.append(directory)
        targets[watch] = target
    }

    func watchFailure(_ errno: Errno, path: [UInt8]) -> FileSystemEventsError {
        switch errno {
        case .noSpace:
            return .watchLimitReached(path: FilePath(bytes: path), currentLimit: InotifyLimits.userLimit("watches")?.value)
        case .permissionDenied:
            return .permissionDenied(FilePath(bytes: path), operation: "watch")
        default:
            return .systemCallFailed(call: "inotify_add_watch", path: FilePath(bytes: path), errno: errno)
        }
    }

    /// The files (and symlinks, FIFOs, ...: any item but a directory) met more than once by
    /// identity (hard links) by the crawl of `top` that collected `state`, each group in the
    /// order of the model.
    func hardLinkCandidates(in top: WatchedDirectory, _ state: CrawlState) -> [FileIdentity: [(WatchedDirectory, [UInt8])]] {
        let repeated = state.repeatedInodes
        guard !repeated.isEmpty else { return [:] }
        var groups: [FileIdentity: [(WatchedDirectory, [UInt8])]] = [:]
        top.forEachDirectory { node in
            for (name, entry) in node.children where entry.type != .directory && repeated.contains(entry.inode) {
                groups[FileIdentity(device: node.device, inode: entry.inode), default: []].append((node, Array(name)))
            }
        }
        return groups.filter { $0.value.count > 1 }
    }

    /// The hard links a crawl of `top` found: inodes met more than once below it, and the files
    /// it found with more than one link (``CrawlState/findsLinks``), whose other paths anywhere
    /// in the model are looked for with the batch's other new links.
    ///
    /// A file whose names the crawl found are fewer than its links may have others elsewhere
    /// in the model: its names go to the index as new links, looked for in the next walk. Taken
    /// as all its names, those found together kept the walk from looking: `mkdir v; ln f v/a;
    /// ln f v/b` read as one new directory, then a write through `v/b`, was told at `v/a` and
    /// `v/b` and never at `f` (a race hunt, 2026-11-29).
    mutating func registerLinks(foundBy state: CrawlState, in top: WatchedDirectory) {
        var linkCounts: [FileIdentity: UInt32] = [:]
        for file in state.linkedFiles { linkCounts[file.identity] = max(linkCounts[file.identity] ?? 0, file.linkCount) }
        for (identity, paths) in hardLinkCandidates(in: top, state) {
            if let links = linkCounts[identity], paths.count < links {
                for (directory, name) in paths { hardLinks.add(identity, directory, name) }
            } else {
                hardLinks.register(identity, paths: paths)
            }
        }
        for file in state.linkedFiles {
            guard let entry = file.directory.children[file.name], entry.inode == file.identity.inode else { continue }
            hardLinks.add(file.identity, file.directory, file.name)
            // Only a regular file gets a watch of its own for a name out of view.
            guard entry.type == .file else { continue }
            // A rescan tells only the files changed since `changedSince`: one of these written
            // through its name out of view after that crawl listed it is found by its time.
            hardLinkCandidates.append(HardLinkCandidate(directory: file.directory, name: file.name, inode: file.identity.inode,
                                                        changedSince: state.changedSince))
        }
    }
}

/// `/proc/self/fd`, through which a watch is added to an open directory rather than to a path.
enum ProcessDescriptors {
    static let areVisible: Bool = access("/proc/self/fd", F_OK) == 0

    /// How many directory descriptors a walk of the tree (a crawl, an examination of every
    /// file) may hold open along its descent, to open each subdirectory by its name alone.
    ///
    /// At most 32, so that a deep tree costs no more than that (below that depth directories
    /// are opened by path), and none under a low open file limit, where every descriptor a
    /// walk holds is one the rest of the process may be refused: under `ulimit -n 16` the
    /// libinotifytools backend, whose owner thread needs a few of its own, stopped for want of
    /// one, and a walk holding a fixed 32 failed to open what lay below and skipped it.
    static func heldBudget() -> Int {
        min(32, descriptorAllowance())
    }

    /// How many directory descriptors a start-up's crawl may hold with its
    /// ``CrawlPrefetcher``: those of the prefetcher's descent, and those of the directories it
    /// has opened and watched and handed over, not yet taken by the crawl.
    ///
    /// More than ``heldBudget()``: the prefetcher leaves a directory with no subdirectory for
    /// the crawl to list (its files examined there), so that the two threads share the work, and
    /// each such directory travels with its descriptor. At 16 in flight it could hand over only
    /// half of each batch of 32, so it listed most of a tree's leaves itself while the crawl
    /// waited for them: on 10,000 directories of 10 files, 2,035 samples of the prefetcher's
    /// thread against 1,361 of the crawl's, and `ready` in 191 ms; at 80, 168 ms.
    static func startUpBudget() -> Int {
        min(96, descriptorAllowance())
    }

    /// An eighth of the open file limit, less 16, and none under a low limit (see
    /// ``heldBudget()``).
    private static func descriptorAllowance() -> Int {
        guard case .success(let limit) = Syscalls.openFileLimit() else { return 0 }
        return Int(min(UInt64(Int32.max), limit / 8 > 16 ? limit / 8 - 16 : 0))
    }
}

/// One directory's entries with `d_type` and `d_ino`, which is all a crawl needs for files:
/// no `stat` per file unless asked (a rescan after lost events needs ctimes). Where asked,
/// directories are examined relative to the listing's descriptor, for their identity (a mount
/// point's `d_ino` is not the inode found there), and when following symlinks, what a symlink
/// leads to.
struct DirectoryListing {
    struct Entry {
        /// Where the name is in the listing's ``DirectoryListing/names``.
        var nameStart: Int
        var nameCount: Int
        var type: FileItemType
        var inode: UInt64
        /// The entry's own status (the target's for a followed symlink), when examined.
        var status: FileStatus?
        var isSymlink = false
        /// A symlink to a file, followed (`followSymlinks`): ``status`` is the file's, with the
        /// link's own device and inode.
        var linksToFile = false

        /// Whether a crawl that follows no symlinks descends here: the examined type where
        /// there is one, else the listing's.
        var isDirectory: Bool { (status?.itemType ?? type) == .directory }
    }

    var entries: [Entry] = []
    /// Every entry's name, back to back: one allocation for the directory, not one per name
    /// (which was a malloc and a free for every entry of a start-up).
    var names: [UInt8] = []

    func name(of entry: Entry) -> [UInt8] {
        Array(names[entry.nameStart..<entry.nameStart + entry.nameCount])
    }

    func withName<Result>(of entry: Entry, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        names.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[entry.nameStart..<entry.nameStart + entry.nameCount])) }
    }

    /// Lists the directory open at `descriptor` (which the caller still closes).
    ///
    /// - Parameters:
    ///   - statEach: every entry is examined (`statx`), not only those whose type the
    ///     listing leaves unknown.
    ///   - examinesDirectories: directories are examined too, for an identity that holds at a
    ///     mount point (where `d_ino` is the covered directory's).
    ///   - examinesFiles: regular files are examined too, for their link count.
    static func read(descriptor: CInt, with reader: DirectoryEntryReader, statEach: Bool,
                     examinesDirectories: Bool, examinesFiles: Bool = false, followSymlinks: Bool) -> Result<DirectoryListing, Errno> {
        var listing = DirectoryListing()
        var unsearchable: Errno?
        // Whether some name could be examined, which proves the directory searchable.
        var examinedOne = false
        let listed = reader.forEachEntry(in: descriptor) { found in
            let namePointer = found.name
            let nameCount = strlen(namePointer)
            var entry = Entry(nameStart: listing.names.count, nameCount: nameCount, type: found.itemType, inode: found.inode)
            entry.isSymlink = entry.type == .symlink
            if statEach || entry.type == .unknown || (examinesDirectories && entry.type == .directory)
                || (examinesFiles && entry.type == .file) || (followSymlinks && entry.type == .symlink) {
                switch Syscalls.status(namePointer, relativeTo: descriptor) {
                case .success(let status):
                    examinedOne = true
                    entry.status = status
                    entry.type = status.itemType
                    entry.inode = status.inode
                    entry.isSymlink = status.itemType == .symlink
                case .failure(let errno):
                    switch ListedNameFailure(errno) {
                    case .gone: return  // its removal is in the queue
                    case .directoryNotSearchable:
                        // Listed again on the `chmod` that makes it searchable.
                        unsearchable = errno
                        return
                    case .nameNotExaminable:
                        // Kept as the listing describes it, so that a rescan does not tell it
                        // removed; only a name of unknown type cannot be.
                        guard entry.type != .unknown else { return }
                    }
                }
                if followSymlinks && entry.isSymlink,
                   case .success(let target) = Syscalls.status(namePointer, relativeTo: descriptor, followSymlinks: true)
                {
                    if target.itemType == .directory {
                        entry.status = target
                    } else if target.itemType == .file, let link = entry.status {
                        entry.status = target.followed(through: link)  // see `InotifyWatch+FileLinks.swift`
                        entry.linksToFile = true
                    }
                }
            }
            listing.names.append(contentsOf: UnsafeRawBufferPointer(start: namePointer, count: nameCount))
            listing.entries.append(entry)
        }
        if !examinedOne, unsearchable == nil { unsearchable = listing.refusedExamination(in: descriptor) }
        if let unsearchable { return .failure(unsearchable) }
        // A listing cut short keeps what it read (the queue reports the rest), as `readdir` did.
        if case .failure(let errno) = listed, listing.entries.isEmpty { return .failure(errno) }
        return .success(listing)
    }

    /// Where no name was examined (a start-up looks only at regular files; these were
    /// directories, symlinks and the like, typed by the listing), one is examined now, for
    /// whether the directory may be searched: one that may only be read counts as unreadable
    /// (``ListedNameFailure``), whatever it holds, and its names must not enter the model.
    /// Kept there, they were names a consumer cannot see, and the `chmod` that made the
    /// directory searchable told what came in below them, never the names themselves.
    /// Returns the refusal, if any. A name gone or not examinable says nothing; the next does.
    private func refusedExamination(in descriptor: CInt) -> Errno? {
        for entry in entries {
            switch withCString(name(of: entry), { Syscalls.status($0, relativeTo: descriptor) }) {
            case .success: return nil
            case .failure(let errno):
                if case .directoryNotSearchable = ListedNameFailure(errno) { return errno }
            }
        }
        return nil
    }
}
#endif
