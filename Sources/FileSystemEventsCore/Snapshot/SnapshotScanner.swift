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
    package func scan(root: FilePath, sharingWith previous: RootSnapshot? = nil) throws(FileSystemEventsError) -> Result {
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
        walk.ancestors.insert(rootStatus.identity)
        // Only the same directory's tree is shared from (what the diff will also decide).
        let previousTree = previous.flatMap { previous in
            SnapshotDiff.isSameItem(previous.status, rootStatus, atSamePath: true) ? previous.tree : nil
        }
        walk.list(descriptor, into: tree, relativePath: [], depth: 0, previous: previousTree)
        return Result(snapshot: RootSnapshot(status: rootStatus, tree: tree), unreadable: walk.unreadable)
    }

    /// Lists one directory that is already open; used by kernel backends that add a watch
    /// first and list second. Consumes `descriptor`.
    package func scanDirectory(_ descriptor: CInt, relativePath: [UInt8]) -> (SnapshotDirectory, [(relativePath: [UInt8], errno: Errno)]) {
        let tree = SnapshotDirectory(parent: nil, name: [])
        var walk = Walk(scanner: self)
        walk.list(descriptor, into: tree, relativePath: relativePath, depth: 0)
        return (tree, walk.unreadable)
    }

    private struct Walk {
        let scanner: SnapshotScanner
        /// One batch buffer for every directory of the walk: a listing is read whole before
        /// the walk descends.
        let reader = DirectoryEntryReader()
        /// Where a listing is collected before it is copied into a directory at its exact size:
        /// one allocation per directory instead of one per doubling, and no spare capacity
        /// kept for the life of the snapshot.
        var listing: [SnapshotEntry] = []
        var unreadable: [(relativePath: [UInt8], errno: Errno)] = []
        /// Directories on the current descent, to stop symlink loops when following links.
        var ancestors: Set<FileIdentity> = []

        init(scanner: SnapshotScanner) {
            self.scanner = scanner
        }

        /// Lists the directory open at `descriptor` (consumed) into `directory`, and below it.
        ///
        /// - Parameter previous: the same directory in the previous scan, if any; its subtrees
        ///   found unchanged are replaced by the new ones (see ``SnapshotScanner/scan(root:sharingWith:)``).
        /// - Returns: whether `directory` holds exactly what `previous` held, so that the
        ///   caller can share it too.
        @discardableResult
        mutating func list(_ descriptor: CInt, into directory: SnapshotDirectory, relativePath: [UInt8], depth: Int,
                           previous: SnapshotDirectory? = nil) -> Bool {
            defer { Syscalls.close(descriptor) }
            let filter = scanner.filter
            let followsSymlinks = scanner.followsSymlinks
            let onTheWayDown = ancestors
            // Empty, with the capacity earlier directories gave it; taken out so that this
            // copy is its buffer's only owner and appends to it in place.
            var listing = self.listing
            self.listing = []
            let listed = reader.forEachEntry(in: descriptor) { entry in
                let namePointer = entry.name
                var status: FileStatus
                switch Syscalls.status(namePointer, relativeTo: descriptor) {
                case .success(let found): status = found
                case .failure: return  // vanished since the listing, or unexaminable: not there for us
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
                let name = [UInt8](UnsafeRawBufferPointer(start: namePointer, count: strlen(namePointer)))
                if !filter.isEmpty {
                    let path = relativePath.appendingComponent(name)
                    if !filter.admits(relativePath: path, name: name, isDirectory: status.itemType == .directory) { return }
                }
                listing.append(SnapshotEntry(name: name, status: status))
            }
            listing.sort { compareBytes($0.name, $1.name) < 0 }
            var entries = listing.withUnsafeBufferPointer { Array($0) }  // a copy at its size, not a share
            listing.removeAll(keepingCapacity: true)
            self.listing = listing
            if case .failure(let errno) = listed {
                // Cut short (an I/O error on a network file system, say): what was read is not
                // the whole directory, and the diff must not take the rest for removed. (A
                // directory removed mid-scan is not a failure: it lists as empty, the truth.)
                directory.isUnreadable = true
                unreadable.append((relativePath, errno))
                return false
            }
            // Previous listings are kept sorted like this one, so they pair by one merge walk.
            let sharing = previous.flatMap { $0.isUnreadable ? nil : $0 }
            var cursor = 0

            if scanner.isRecursive || depth == 0 {
                let descend = scanner.isRecursive
                for index in entries.indices where entries[index].status.itemType == .directory && descend {
                    let identity = entries[index].status.identity
                    if scanner.followsSymlinks && ancestors.contains(identity) { continue }
                    let childPath = relativePath.appendingComponent(entries[index].name)
                    // At the depth limit a directory is an entry, as in a non-recursive scan.
                    if !filter.descends(intoDirectoryAt: childPath) { continue }
                    let child = SnapshotDirectory(parent: directory, name: entries[index].name)
                    entries[index].directory = child
                    var previousChild: SnapshotDirectory?
                    if let sharing {
                        let name = entries[index].name
                        while cursor < sharing.entries.count && compareBytes(sharing.entries[cursor].name, name) < 0 { cursor += 1 }
                        if cursor < sharing.entries.count, let candidate = sharing.entries[cursor].directory,
                           compareBytes(sharing.entries[cursor].name, name) == 0,
                           SnapshotDiff.isSameItem(sharing.entries[cursor].status, entries[index].status, atSamePath: true)
                        {
                            previousChild = candidate
                        }
                    }
                    let opened = withCString(entries[index].name) {
                        Syscalls.openDirectory($0, relativeTo: descriptor, followSymlinks: scanner.followsSymlinks)
                    }
                    switch opened {
                    case .success(let childDescriptor):
                        if scanner.followsSymlinks { ancestors.insert(identity) }
                        let unchanged = list(childDescriptor, into: child, relativePath: childPath, depth: depth + 1, previous: previousChild)
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
                            continue  // replaced or removed since it was examined; the next scan sees the truth
                        }
                        unreadable.append((childPath, errno))
                    }
                }
            }
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
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { buffer in
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: base, byteCount: source.count)
            }
        }
        buffer[bytes.count] = 0
        return body(UnsafePointer(buffer.baseAddress!))
    }
}
