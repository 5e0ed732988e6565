import PlatformLibc
import CFileSystemEventsShims
package import SystemPackage

/// Walks a tree into a ``RootSnapshot``: the polling backend's hot path and the kernel
/// backends' rescan after an overflow.
///
/// It never builds a path string per entry: each directory is opened relative to its parent's
/// descriptor (`openat`), listed once (``DirectoryEntryReader``, in `getdents64` batches), and
/// every entry is examined relative to that descriptor (`statx`), so the kernel resolves one
/// component at a time and no path is joined unless a filter needs it.
package struct SnapshotScanner: Sendable {
    package var isRecursive: Bool
    package var followsSymlinks: Bool
    package var filter: PathFilter

    package init(isRecursive: Bool = true, followsSymlinks: Bool = false, filter: PathFilter = .everything) {
        self.isRecursive = isRecursive
        self.followsSymlinks = followsSymlinks
        self.filter = filter
    }

    package init(options: WatchOptions) {
        self.init(isRecursive: options.isRecursive, followsSymlinks: options.followsSymlinks, filter: options.filter)
    }

    /// A scan's snapshot and the directories it could not list.
    package struct Result {
        package var snapshot: RootSnapshot
        /// Root-relative paths of directories that could not be listed, with the reason.
        package var unreadable: [(relativePath: [UInt8], errno: Errno)]
        /// The walk raced a change of the tree's directories: one listed at two places (moved
        /// while the walk went on, or mounted twice in the tree), or one whose name held
        /// another directory, or none, by the time it was opened. The snapshot may then hold
        /// one directory twice, listed at one place and kept unlisted at another, which no
        /// disk ever held; a caller that diffs it had better scan again.
        package var isTorn = false
        /// The walk stopped early because `abandoning` said so: the snapshot is partial and
        /// must not be diffed or kept.
        package var isAbandoned = false
    }

    /// Scans `root` (a directory or a single file). A root that cannot be examined is an
    /// error the user must act on; anything below it that cannot be read is only reported.
    ///
    /// - Parameter previous: the last scan of the same root, when the caller is about to diff
    ///   against it and holds it alone. Every subtree found exactly as `previous` recorded it
    ///   (names, statuses and structure) is then *shared*: `previous` is changed to point at
    ///   the new scan's subtree, and its own copy is freed as soon as the walk has compared it.
    ///   So a polling cycle holds one tree plus what changed, not two whole trees at its peak,
    ///   and the diff skips shared subtrees by identity instead of comparing them again.
    ///   `previous` still describes the state it recorded (what it shares is equal to what it
    ///   held) and is consumed by the diff as usual.
    ///
    /// A walk that raced a directory's move (``Result/isTorn``) is walked again, up to twice: its
    /// tree may hold one directory twice, which no disk ever held, and diffed, it told the
    /// subtree moved away, and the next diff removed it from where it had been kept (scenario
    /// 110's bursts of exchanges). A directory mounted twice in the tree is listed twice every
    /// time; its third walk is taken as it is, but for a directory it still holds at two places
    /// that are not two mounts: those places take back what `previous` held at them
    /// (``repairDirectoriesListedTwice(in:root:previous:)``). Before each walk again,
    /// `previous` is led back up its own tree (``SnapshotDirectory/reattachSubtrees()``): the
    /// dropped walk shared subtrees with it, whose copies lead up into that walk's
    /// directories, freed with it.
    /// Every caller gets this: the polling backend's cycles and its scan at `ready`, and
    /// ``FileTreeSnapshot``'s scans, which an app saves to catch up from at its next launch.
    ///
    /// - Parameter abandoning: asked before each directory is listed; once it answers `true`
    ///   the walk stops and returns a partial snapshot marked ``Result/isAbandoned``. A watch
    ///   whose consumer has gone passes it, so that cancelling a watch of a million entries
    ///   closes its descriptors at once rather than after the scan under way (seconds). It is
    ///   asked once per directory, so it must be cheap (a flag behind a lock is).
    package func scan(root: FilePath, sharingWith previous: RootSnapshot? = nil,
                      abandoning: (() -> Bool)? = nil) throws(FileSystemEventsError) -> Result {
        // One call per level of the tree: on a stack made for any depth.
        try ProducerThread.withLargeStack {
            Swift.Result { () throws(FileSystemEventsError) in
                try scanOnThisStack(root: root, sharingWith: previous, abandoning: abandoning)
            }
        }.get()
    }

    private func scanOnThisStack(root: FilePath, sharingWith previous: RootSnapshot?,
                                 abandoning: (() -> Bool)?) throws(FileSystemEventsError) -> Result {
        var result = try walkOnce(root: root, sharingWith: previous, abandoning: abandoning)
        for _ in 0..<2 where result.isTorn && !result.isAbandoned {
            previous?.tree?.reattachSubtrees()
            result = try walkOnce(root: root, sharingWith: previous, abandoning: abandoning)
        }
        // Followed, two symlinks may lead to one directory, which is then at two places.
        if result.isTorn && !result.isAbandoned && !followsSymlinks, let tree = result.snapshot.tree {
            Self.repairDirectoriesListedTwice(in: tree, root: root,
                                              previous: Self.tree(of: previous, sameRootAs: result.snapshot.status))
        }
        return result
    }

    /// One walk of ``scan(root:sharingWith:abandoning:)``.
    private func walkOnce(root: FilePath, sharingWith previous: RootSnapshot?,
                          abandoning: (() -> Bool)?) throws(FileSystemEventsError) -> Result {
        let rootStatus: FileStatus
        switch Syscalls.status(root, followSymlinks: true) {
        case .success(let status): rootStatus = status
        case .failure(let errno): throw .forRoot(root, call: "statx", errno: errno)
        }
        guard rootStatus.itemType == .directory else {
            return Result(snapshot: RootSnapshot(status: rootStatus, tree: nil), unreadable: [])
        }
        let descriptor: CInt
        switch Syscalls.open(root, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): throw .forRoot(root, call: "open", errno: errno)
        }
        let tree = SnapshotDirectory(parent: nil, name: [])
        var walk = Walk(scanner: self)
        walk.abandoning = abandoning
        walk.ancestors.insert(rootStatus.identity)
        // A link to a directory above the root leads back onto the root's own path.
        if followsSymlinks { walk.ancestors.formUnion(Syscalls.identitiesAbove(directoryAt: root.bytes)) }
        walk.list(descriptor, into: tree, relativePath: [], identity: rootStatus.identity,
                  previous: Self.tree(of: previous, sameRootAs: rootStatus))
        var result = Result(snapshot: RootSnapshot(status: rootStatus, tree: tree), unreadable: walk.unreadable)
        result.isTorn = walk.isTorn
        result.isAbandoned = walk.isAbandoned
        return result
    }

    /// `previous`'s tree where its root is the same directory as the one just found at the
    /// root (what the diff will also decide): only that tree is shared from, or repaired from.
    private static func tree(of previous: RootSnapshot?, sameRootAs rootStatus: FileStatus) -> SnapshotDirectory? {
        guard let previous, SnapshotDiff.isSameItem(previous.status, rootStatus, atSamePath: true) else { return nil }
        return previous.tree
    }

    /// Lists one directory that is already open; used by kernel backends that add a watch
    /// first and list second. Consumes `descriptor`.
    package func scanDirectory(_ descriptor: CInt, relativePath: [UInt8]) -> (SnapshotDirectory, [(relativePath: [UInt8], errno: Errno)]) {
        let tree = SnapshotDirectory(parent: nil, name: [])
        var walk = Walk(scanner: self)
        walk.list(descriptor, into: tree, relativePath: relativePath, identity: nil)
        return (tree, walk.unreadable)
    }

    private struct Walk {
        let scanner: SnapshotScanner
        /// One batch buffer for every directory of the walk: a listing is read whole before
        /// the walk descends.
        let reader = DirectoryEntryReader()
        /// Where a listing is collected before it is moved into a directory at its exact size:
        /// one allocation per directory instead of one per doubling, and no spare capacity
        /// kept for the life of the snapshot.
        let listing = ListingBuffer()
        var unreadable: [(relativePath: [UInt8], errno: Errno)] = []
        /// Directories on the current descent, to stop symlink loops when following links.
        var ancestors: Set<FileIdentity> = []
        /// Every directory listed so far (when links are not followed: followed, two links may
        /// lead to one directory).
        var listed: Set<FileIdentity> = []
        /// See ``Result/isTorn``.
        var isTorn = false
        /// See ``SnapshotScanner/scan(root:sharingWith:abandoning:)``.
        var abandoning: (() -> Bool)?
        /// See ``Result/isAbandoned``.
        var isAbandoned = false
        /// The directories on the current descent, the walk's top first: a directory's
        /// descriptor is needed again after its subdirectories are walked (to open the next
        /// one), but holding one per level would take as many descriptors as the tree is deep,
        /// and a tree 1,100 levels deep would then fail under the common `ulimit -n` of 1024.
        /// So at most ``descriptorBudget`` stay open: past it the shallowest (never the top)
        /// is closed, and opened again from the top, checked by identity, only if it still has
        /// a subdirectory to open (in a deep chain of single directories, none has).
        var descent: [Level] = []
        private var openLevels = 0
        /// No level above this one is open, except the top.
        private var shallowestOpen = 1

        struct Level {
            var descriptor: CInt?
            let name: SnapshotName
            /// `nil` for the top of a ``SnapshotScanner/scanDirectory(_:relativePath:)``
            /// walk, which is never closed early.
            let identity: FileIdentity?
            /// Found moved or gone when it was to be opened again: its other subdirectories are
            /// left to the next scan, not each opened again in vain.
            var isLost = false
        }

        static var descriptorBudget: Int { 32 }

        init(scanner: SnapshotScanner) {
            self.scanner = scanner
        }

        private mutating func enter(_ descriptor: CInt, name: SnapshotName, identity: FileIdentity?) {
            descent.append(Level(descriptor: descriptor, name: name, identity: identity))
            openLevels += 1
            while openLevels > Self.descriptorBudget && shallowestOpen < descent.count - 1 {
                if let open = descent[shallowestOpen].descriptor {
                    Syscalls.close(open)
                    descent[shallowestOpen].descriptor = nil
                    openLevels -= 1
                }
                shallowestOpen += 1
            }
        }

        private mutating func leave() {
            if let open = descent.removeLast().descriptor {
                Syscalls.close(open)
                openLevels -= 1
            }
            shallowestOpen = min(shallowestOpen, max(1, descent.count))
        }

        /// The descriptor of the directory at `depth` on the descent, opened again if it was
        /// closed to stay within the budget: from the top, by the names walked, and only if it
        /// is still the directory listed (a rename since is the next scan's to see).
        private mutating func reopenedDescriptor(atDepth depth: Int) -> Swift.Result<CInt, Errno> {
            if let open = descent[depth].descriptor { return .success(open) }
            guard !descent[depth].isLost, let top = descent[0].descriptor, let identity = descent[depth].identity else {
                return .failure(.noSuchFileOrDirectory)
            }
            descent[depth].isLost = true  // until found below
            var current = top
            for level in 1...depth {
                let opened = withCString(descent[level].name) {
                    Syscalls.openDirectory($0, relativeTo: current, followSymlinks: scanner.followsSymlinks)
                }
                if current != top { Syscalls.close(current) }
                switch opened {
                case .success(let next): current = next
                case .failure(let errno): return .failure(errno)
                }
            }
            guard case .success(let found) = Syscalls.status(ofDescriptor: current), found.identity == identity else {
                Syscalls.close(current)
                return .failure(.noSuchFileOrDirectory)
            }
            descent[depth].descriptor = current
            descent[depth].isLost = false
            openLevels += 1
            shallowestOpen = min(shallowestOpen, depth)
            return .success(current)
        }

        /// What examining a directory listed by `d_type` found (see ``list(_:into:relativePath:identity:previous:)``).
        enum DirectoryExamination {
            /// Opened, and examined through its descriptor (the walk's to list and close).
            case opened(CInt, FileStatus)
            /// Examined by name, but not opened: `status` may say it is no longer a directory,
            /// or opening it failed with `errno` (permissions).
            case unopened(FileStatus, Errno)
            /// Not examinable now (its directory could not be opened again): the previous
            /// scan's status of the name.
            case kept(FileStatus)
            /// Gone since it was listed, or not examinable and new.
            case leftOut
            /// The directory listing it may be read but not searched.
            case notSearchable(Errno)
        }

        /// Opens the directory `name` in the directory at `depth` and examines it through the
        /// descriptor; where it cannot be opened, examines the name as a listing does, with the
        /// same outcomes (``ListedNameFailure``).
        private mutating func examineDirectory(named name: SnapshotName, atDepth depth: Int,
                                               previous: SnapshotDirectory?) -> DirectoryExamination {
            // What the previous scan found at the name stands; a new name waits for a scan
            // that can examine it (as where a listed name cannot be examined).
            func keptOrLeftOut() -> DirectoryExamination {
                if let kept = previous?.entry(named: name), kept.itemType == .directory { return .kept(kept.status) }
                return .leftOut
            }
            let parent: CInt
            switch reopenedDescriptor(atDepth: depth) {
            case .success(let found): parent = found
            case .failure: return keptOrLeftOut()
            }
            let opened = withCString(name) { Syscalls.openDirectory($0, relativeTo: parent, followSymlinks: false) }
            if case .success(let descriptor) = opened {
                if case .success(let status) = Syscalls.status(ofDescriptor: descriptor) { return .opened(descriptor, status) }
                Syscalls.close(descriptor)
            }
            switch withCString(name, { Syscalls.status($0, relativeTo: parent) }) {
            case .success(let status):
                if case .failure(let errno) = opened { return .unopened(status, errno) }
                return .unopened(status, .noSuchFileOrDirectory)
            case .failure(let errno):
                switch ListedNameFailure(errno) {
                case .gone: return .leftOut
                case .directoryNotSearchable: return .notSearchable(errno)
                case .nameNotExaminable: return keptOrLeftOut()
                }
            }
        }

        /// Lists the directory open at `descriptor` (consumed) into `directory`, and below it.
        ///
        /// - Parameter previous: the same directory in the previous scan, if any; its subtrees
        ///   found unchanged are replaced by the new ones (see ``SnapshotScanner/scan(root:sharingWith:abandoning:)``).
        /// - Returns: whether `directory` holds exactly what `previous` held, so that the
        ///   caller can share it too.
        @discardableResult
        mutating func list(_ descriptor: CInt, into directory: SnapshotDirectory, relativePath: [UInt8], identity: FileIdentity?,
                           previous: SnapshotDirectory? = nil) -> Bool {
            let depth = descent.count
            if let identity, !scanner.followsSymlinks, !listed.insert(identity).inserted { isTorn = true }
            enter(descriptor, name: directory.snapshotName, identity: identity)
            defer { leave() }
            if isAbandoned { return false }
            if let abandoning, abandoning() {
                isAbandoned = true
                return false
            }
            let filter = scanner.filter
            let followsSymlinks = scanner.followsSymlinks
            let onTheWayDown = ancestors
            // A directory the walk will enter is examined through the descriptor it is opened
            // with (below), not by name here as well: a `statx` by name is a path lookup, the
            // dearest part of a scan, and a descriptor's is not. The C walk that `fstatat`s
            // each name and opens each directory does one lookup per directory, as this now
            // does (a tenth of the lookups of a tree of ten files per directory). Its `d_type`
            // says which names are directories; where it does not (`DT_UNKNOWN`), or where
            // symlinks are followed, each name is examined here.
            let defersDirectories = scanner.isRecursive && !followsSymlinks
            // Empty, with the capacity earlier directories gave it.
            let listing = self.listing
            // Set where the directory may be read but not searched (``ListedNameFailure``).
            var unsearchable: Errno?
            // A name too long to be kept inline is the previous scan's, where it was there
            // (``SnapshotDirectory/storedName(equalTo:)``): an unchanged directory's names are
            // then not allocated again on every scan.
            func snapshotName(_ bytes: UnsafeRawBufferPointer) -> SnapshotName {
                if bytes.count > SnapshotName.inlineCapacity, let stored = previous?.storedName(equalTo: bytes) { return stored }
                return SnapshotName(bytes)
            }
            var listed = reader.forEachEntry(in: descriptor) { entry in
                let namePointer = entry.name
                if defersDirectories && entry.itemType == .directory {
                    let nameBytes = UnsafeRawBufferPointer(start: namePointer, count: strlen(namePointer))
                    var entered = true
                    if !filter.isEmpty {
                        let name = [UInt8](nameBytes)
                        let path = relativePath.appendingComponent(name)
                        if !filter.admits(relativePath: path, name: name, isDirectory: true) { return }
                        entered = filter.descends(intoDirectoryAt: path)
                    }
                    if entered {
                        listing.append(SnapshotEntry(directoryToExamineNamed: snapshotName(nameBytes), inode: entry.inode))
                        return
                    }
                }
                var status: FileStatus
                switch Syscalls.status(namePointer, relativeTo: descriptor) {
                case .success(let found): status = found
                case .failure(let errno):
                    switch ListedNameFailure(errno) {
                    case .gone: return
                    case .directoryNotSearchable:
                        unsearchable = errno
                        return
                    case .nameNotExaminable: break
                    }
                    // What the previous scan found at the name stands; a new name waits for a
                    // scan that can examine it.
                    let name = SnapshotName(UnsafeRawBufferPointer(start: namePointer, count: strlen(namePointer)))
                    if let kept = previous?.entry(named: name) { listing.append(SnapshotEntry(name: name, status: kept.status)) }
                    return
                }
                if followsSymlinks && status.itemType == .symlink,
                    case .success(let target) = Syscalls.status(namePointer, relativeTo: descriptor, followSymlinks: true)
                {
                    if target.itemType == .directory {
                        // A link back to a directory on the way down (`ln -s . loop`) is a loop:
                        // it stays the symlink it is and is never entered, as on every backend.
                        if !onTheWayDown.contains(target.identity) { status = target }
                    } else if target.itemType == .file {
                        status = target.followed(through: status)
                    }
                }
                let nameBytes = UnsafeRawBufferPointer(start: namePointer, count: strlen(namePointer))
                if !filter.isEmpty {
                    let name = [UInt8](nameBytes)
                    let path = relativePath.appendingComponent(name)
                    if !filter.admits(relativePath: path, name: name, isDirectory: status.itemType == .directory) { return }
                }
                listing.append(SnapshotEntry(name: snapshotName(nameBytes), status: status))
            }
            var entries = listing.takeSorted()
            if case .success = listed, let unsearchable { listed = .failure(unsearchable) }
            if case .failure(let errno) = listed {
                // Cut short (an I/O error on a network file system, say), or not searchable:
                // what was read is not the whole directory, and the diff must not take the rest
                // for removed. (A directory removed mid-scan is not a failure: it lists as
                // empty, the truth.)
                directory.isUnreadable = true
                unreadable.append((relativePath, errno))
                return false
            }
            // Previous listings are kept sorted like this one, so they pair by one merge walk.
            let sharing = previous.flatMap { $0.isUnreadable ? nil : $0 }
            var cursor = 0

            // Whether a directory listed to be examined when opened was found gone (or could
            // not be examined, and is new) by then: it is left out once the walk below is done.
            var leavesOut = false
            if scanner.isRecursive || depth == 0 {
                let descend = scanner.isRecursive
                for index in entries.indices where entries[index].status.itemType == .directory && descend {
                    if isAbandoned { break }
                    // The descriptor a directory was examined through, opened or not.
                    var examinedOpening: Swift.Result<CInt, Errno>?
                    if entries[index].isDirectoryToExamine {
                        switch examineDirectory(named: entries[index].name, atDepth: depth, previous: previous) {
                        case .opened(let childDescriptor, let status):
                            entries[index].status = status
                            examinedOpening = .success(childDescriptor)
                        case .unopened(let status, let errno):
                            entries[index].status = status
                            // Replaced by a file or a symlink since it was listed: that is what
                            // the snapshot holds, and the scan is torn (the next one looks again).
                            if status.itemType != .directory {
                                isTorn = true
                                continue
                            }
                            examinedOpening = .failure(errno)
                        case .kept(let status):
                            // Not examinable now: what the previous scan found stands, not
                            // listed (see the failure below), as for a name not examinable.
                            entries[index].status = status
                            examinedOpening = .failure(.noSuchFileOrDirectory)
                        case .leftOut:
                            leavesOut = true
                            isTorn = true
                            continue
                        case .notSearchable(let errno):
                            // As when a name could not be examined while listing: the directory
                            // may be read but not searched, so nothing in it is known.
                            directory.isUnreadable = true
                            unreadable.append((relativePath, errno))
                            return false
                        }
                    }
                    let identity = entries[index].status.identity
                    if scanner.followsSymlinks && ancestors.contains(identity) { continue }
                    let childPath = relativePath.appendingComponent(entries[index].name)
                    // At the depth limit a directory is an entry, as in a non-recursive scan.
                    // (One examined when opened passed this when it was listed.)
                    if examinedOpening == nil && !filter.descends(intoDirectoryAt: childPath) { continue }
                    let child = SnapshotDirectory(parent: directory, name: entries[index].name)
                    entries[index].directory = child
                    var previousChild: SnapshotDirectory?
                    if let sharing {
                        let name = entries[index].name
                        while cursor < sharing.entries.count && SnapshotName.compare(sharing.entries[cursor].name, name) < 0 { cursor += 1 }
                        if cursor < sharing.entries.count, let candidate = sharing.entries[cursor].directory,
                           sharing.entries[cursor].name == name,
                           SnapshotDiff.isSameItem(sharing.entries[cursor].status, entries[index].status, atSamePath: true)
                        {
                            previousChild = candidate
                        }
                    }
                    // A directory examined by name may hold another directory by the time it is
                    // opened (an exchange or a rename onto it between the `statx` and the
                    // `open`): listed, its contents went into the entry of the directory
                    // examined, and the snapshot had one item with another's subtree. The diff
                    // then told the wrong subtree moved with it (scenario 110's bursts of
                    // exchanges broke polling's replay about once in 450 bursts). One `fstat`
                    // per directory; such a directory is left unlisted, as one that could not be
                    // opened, for the next scan. One examined through its descriptor is what it
                    // was opened as.
                    let verified = examinedOpening ?? reopenedDescriptor(atDepth: depth).flatMap { parent in
                        withCString(entries[index].name) {
                            Syscalls.openDirectory($0, relativeTo: parent, followSymlinks: scanner.followsSymlinks)
                        }
                    }.flatMap { descriptor -> Swift.Result<CInt, Errno> in
                        if case .success(let found) = Syscalls.status(ofDescriptor: descriptor), found.identity == identity {
                            return .success(descriptor)
                        }
                        Syscalls.close(descriptor)
                        return .failure(.noSuchFileOrDirectory)
                    }
                    switch verified {
                    case .success(let childDescriptor):
                        if scanner.followsSymlinks { ancestors.insert(identity) }
                        let unchanged = list(childDescriptor, into: child, relativePath: childPath, identity: identity, previous: previousChild)
                        if scanner.followsSymlinks { ancestors.remove(identity) }
                        if unchanged, let sharing {
                            // The previous scan's copy of this subtree goes now, not after the diff.
                            sharing.entries[cursor].directory = child
                        }
                    case .failure(let errno):
                        // Not listed, so its contents are unknown, not gone: the diff keeps what
                        // the previous scan found there. (Left as an empty listing, a directory
                        // renamed away between its `statx` and this `open` looked emptied: the
                        // next scan then reported its rename and every item in it created anew.)
                        child.isUnreadable = true
                        if errno == .noSuchFileOrDirectory || errno == .notDirectory || errno == .tooManySymbolicLinkLevels {
                            isTorn = true
                            continue  // replaced or removed since it was examined; the next scan sees the truth
                        }
                        unreadable.append((childPath, errno))
                    }
                }
            }
            // Left out with them: those an abandoned walk never examined (its snapshot is
            // dropped). Each is still the placeholder it was listed as.
            if leavesOut || isAbandoned { entries.removeAll { $0.isDirectoryToExamine } }
            directory.entries = entries
            guard let sharing, sharing.entries.count == entries.count else { return false }
            for index in entries.indices {
                let old = sharing.entries[index]
                let new = entries[index]
                guard old.directory === new.directory, old.status == new.status, old.name == new.name else { return false }
            }
            return true
        }
    }
}

/// Calls `body` with `bytes` as a NUL-terminated C string.
///
/// The copy is made in temporary storage (on the stack, at the sizes of names and most
/// paths): appending the terminator to a copy of the array allocated on the heap once per
/// call, and this runs once per examined name.
@inline(__always)
package func withCString<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    bytes.withUnsafeBytes { withCString(raw: $0, body) }
}

/// Calls `body` with `name` as a NUL-terminated C string, copied on the stack.
@inline(__always)
package func withCString<R>(_ name: SnapshotName, _ body: (UnsafePointer<CChar>) -> R) -> R {
    name.withBytes { withCString(raw: $0, body) }
}

/// The copy both `withCString` functions make.
@inline(__always)
private func withCString<R>(raw source: UnsafeRawBufferPointer, _ body: (UnsafePointer<CChar>) -> R) -> R {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: source.count + 1) { buffer in
        if let base = source.baseAddress {
            UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: base, byteCount: source.count)
        }
        buffer[source.count] = 0
        return body(UnsafePointer(buffer.baseAddress!))
    }
}

extension SnapshotEntry {
    /// A directory listed by its `d_type`, to be examined through the descriptor the walk
    /// opens it with (``SnapshotScanner``): a place held in the sorted listing, never left in
    /// a snapshot. No `statx` gives a change time of `Int64.min` on device 0.
    fileprivate init(directoryToExamineNamed name: SnapshotName, inode: UInt64) {
        var status = FileStatus(device: 0, inode: inode, mode: UInt32(S_IFDIR))
        status.changeTime = .min
        self.init(name: name, status: status)
    }

    fileprivate var isDirectoryToExamine: Bool { status.changeTime == .min && status.device == 0 }
}
