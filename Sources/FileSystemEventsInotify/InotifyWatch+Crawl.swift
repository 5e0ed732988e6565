#if os(Linux)
import Glibc
import CFileSystemEventsShims
import FileSystemEventsCore
import SystemPackage

extension InotifyWatch {
    /// Watches a root and crawls it; the initial state, reported by no event.
    mutating func addRoot(_ path: FilePath, index: Int) throws(FileSystemEventsError) {
        let status: FileStatus
        switch Syscalls.status(path, followSymlinks: true) {
        case .success(let found): status = found
        case .failure(let errno): throw .forRoot(path, call: "statx", errno: errno)
        }
        let bytes = path.bytes
        if status.itemType == .directory {
            let tree = WatchedDirectory(parent: nil, name: [], root: index)
            roots.append(WatchedRoot(path: path, paths: PathBuilder(root: path), bytes: bytes, device: status.device, kind: .directory(tree)))
            if case .failure(let errno) = prewatch(bytes), errno != .noSuchFileOrDirectory {
                throw watchFailure(errno, path: bytes)
            }
            var crawlState = CrawlState()
            crawlState.ancestors.insert(status.inode)
            crawl(tree, emitting: false, state: &crawlState)
            if let failure = crawlState.failure { throw failure }
            if tree.watch < 0 {
                throw .permissionDenied(path, operation: "watch")
            }
            registerHardLinks(crawlState.hardLinkCandidates)
        } else {
            // A single file: watch its directory and pick out its name, so an editor that
            // renames a new file over it (a new inode) is followed.
            let parent = path.removingLastComponent()
            let name = path.lastComponent.map { FilePath(root: nil, [$0]).bytes } ?? []
            let watch: CInt
            let mask = watchMask
            switch kernel?.addWatch(path: parent.bytes, mask: mask) ?? .failure(.badFileDescriptor) {
            case .success(let found): watch = found
            case .failure(let errno): throw watchFailure(errno, path: parent.bytes)
            }
            roots.append(
                WatchedRoot(path: path, paths: PathBuilder(root: path), bytes: bytes, device: status.device,
                            kind: .file(parentWatch: watch, name: name, type: status.itemType, inode: status.inode))
            )
            targets[watch, default: WatchTargets()].fileRoots.append(index)
        }
    }

    /// What one crawl collects besides the tree.
    struct CrawlState {
        var failure: FileSystemEventsError?
        /// Files seen so far by inode, to find hard links within the tree.
        var firstSeen: [UInt64: (WatchedDirectory, [UInt8])] = [:]
        var hardLinkCandidates: [UInt64: [(WatchedDirectory, [UInt8])]] = [:]
        /// Set during an overflow rescan: files whose ctime is at or after this moment
        /// (wall-clock ns) changed while events were being lost.
        var changedSince: Int64?
        var changed: [(directory: WatchedDirectory, name: [UInt8], content: Bool)] = []
        /// Directories on the current descent (following symlinks), against loops.
        var ancestors: Set<UInt64> = []
    }

    /// Gives a library backend the chance to watch a new subtree with its own crawl first
    /// (the raw kernel does nothing). Not with excludes or symlink following, which the
    /// library's crawl would not honour.
    mutating func prewatch(_ path: [UInt8]) -> Result<Void, Errno> {
        guard options.isRecursive, options.filter.exclude.isEmpty, !options.followsSymlinks else { return .success(()) }
        let mask = watchMask
        return kernel?.watchRecursively(path: path, mask: mask) ?? .success(())
    }

    mutating func crawl(_ directory: WatchedDirectory, emitting: Bool) {
        let absolute = roots[directory.root].paths.bytes(directory.relativePath)
        if case .failure(let errno) = prewatch(absolute), errno == .noSpace {
            pendingFailure = watchFailure(errno, path: absolute)
            return
        }
        var state = CrawlState()
        crawl(directory, emitting: emitting, state: &state)
        if let failure = state.failure, failure != pendingFailure {
            pendingFailure = failure
        }
        registerHardLinks(state.hardLinkCandidates)
    }

    /// Watch, then list: the watch exists before the listing is read, so anything created in
    /// between is either in the listing or reported by the kernel (and then deduplicated by
    /// name and inode), never lost.
    mutating func crawl(_ directory: WatchedDirectory, emitting: Bool, state: inout CrawlState) {
        guard state.failure == nil else { return }
        let root = directory.root
        let relative = directory.relativePath
        let absolute = roots[root].paths.bytes(relative)
        let mask = watchMask
        switch kernel?.addWatch(path: absolute, mask: mask) ?? .failure(.badFileDescriptor) {
        case .success(let watch):
            register(directory, watch: watch)
        case .failure(let errno):
            switch errno {
            case .noSuchFileOrDirectory, .notDirectory:
                // Not at this path any more: deleted (its removal follows in the queue), or
                // renamed by an event not read yet. Look again at its current path later.
                if let parent = directory.parent { unverified.append((parent, directory.name)) }
                return
            case .permissionDenied:
                diagnose(.unreadableDirectory, absolute, errno: errno,
                         "cannot watch \(FilePath(bytes: absolute)) (\(errno)); its contents are not reported")
                return
            default:
                state.failure = watchFailure(errno, path: absolute)
                return
            }
        }

        let listing: [DirectoryListing.Entry]
        switch DirectoryListing.read(absolute, statEach: state.changedSince != nil) {
        case .success(let entries): listing = entries
        case .failure(let errno):
            if errno != .noSuchFileOrDirectory && errno != .notDirectory {
                diagnose(.unreadableDirectory, absolute, errno: errno,
                         "cannot list \(FilePath(bytes: absolute)) (\(errno)); its contents are not reported")
            } else if let parent = directory.parent {
                unverified.append((parent, directory.name))
            }
            return
        }
        directory.isListed = true
        for item in listing {
            let path = relative.appendingComponent(item.name)
            var type = item.type
            var inode = item.inode
            if type == .unknown || (options.followsSymlinks && type == .symlink) {
                let follow = options.followsSymlinks
                guard case .success(let status) = Syscalls.status(roots[root].paths.path(path), followSymlinks: follow) else { continue }
                type = status.itemType
                inode = status.inode
                // A link back to a directory on the way down is a loop: report it, do not enter.
                if follow && type == .directory && state.ancestors.contains(status.inode) {
                    type = .symlink
                    inode = item.inode
                }
            }
            guard options.filter.admits(relativePath: path, name: item.name, isDirectory: type == .directory) else { continue }
            if let existing = directory.children[item.name], existing.inode == inode { continue }
            var entry = WatchedEntry(type: type, inode: inode)
            if emitting {
                produced.append(makeEvent(.created, root: root, relative: path, type: type, inode: inode, synthetic: true))
            }
            if type == .file {
                if let first = state.firstSeen[item.inode] {
                    state.hardLinkCandidates[item.inode, default: [first]].append((directory, item.name))
                } else {
                    state.firstSeen[item.inode] = (directory, item.name)
                }
                if let since = state.changedSince, let status = item.status, status.changeTime >= since {
                    state.changed.append((directory, item.name, status.modificationTime >= since))
                }
            }
            if type == .directory && options.isRecursive {
                let child = WatchedDirectory(parent: directory, name: item.name, root: root)
                entry.directory = child
                directory.children[item.name] = entry
                state.ancestors.insert(inode)
                crawl(child, emitting: emitting, state: &state)
                state.ancestors.remove(inode)
            } else {
                directory.children[item.name] = entry
            }
        }
    }

    /// Maps `watch` to `directory`. A watch stands for one inode, and an inode for one place in
    /// a root's tree: if the kernel returns a watch that another node of the same root still
    /// holds, that node is a stale copy of this directory (it moved in a way the model has not
    /// heard of yet), so it leaves the model, and its old path is reported removed.
    mutating func register(_ directory: WatchedDirectory, watch: CInt) {
        directory.watch = watch
        var target = targets[watch] ?? WatchTargets()
        // Following symlinks, one directory may stand at two paths: then both nodes stay.
        let stale = options.followsSymlinks ? [] : target.directories.filter { $0 !== directory && $0.root == directory.root }
        target.directories.removeAll { node in node === directory || stale.contains { $0 === node } }
        target.directories.append(directory)
        targets[watch] = target
        for node in stale {
            node.watch = -1
            guard node.isAttached, let parent = node.parent, let entry = parent.children[node.name], entry.directory === node else { continue }
            let path = node.relativePath
            parent.children[node.name] = nil
            for child in entry.directory.map({ [$0] }) ?? [] { unwatchDescendants(of: child) }
            produced.append(makeEvent(.removed, root: node.root, relative: path, type: .directory, inode: entry.inode, synthetic: true))
        }
    }

    /// Unwatches the directories below `directory` (not `directory` itself).
    private mutating func unwatchDescendants(of directory: WatchedDirectory) {
        for entry in directory.children.values {
            if let child = entry.directory { unwatch(child) }
        }
    }

    func watchFailure(_ errno: Errno, path: [UInt8]) -> FileSystemEventsError {
        switch errno {
        case .noSpace:
            return .watchLimitReached(path: FilePath(bytes: path), currentLimit: InotifyLimits.current("max_user_watches"))
        case .permissionDenied:
            return .permissionDenied(FilePath(bytes: path), operation: "watch")
        default:
            return .systemCallFailed(call: "inotify_add_watch", path: FilePath(bytes: path), errno: errno)
        }
    }

    mutating func registerHardLinks(_ candidates: [UInt64: [(WatchedDirectory, [UInt8])]]) {
        for (inode, paths) in candidates {
            hardLinks.register(inode: inode, paths: paths)
        }
    }
}

/// One directory's entries with `d_type` and `d_ino`, which is all a crawl needs: no `stat`
/// per file unless asked (an overflow rescan needs ctimes).
enum DirectoryListing {
    struct Entry {
        var name: [UInt8]
        var type: FileItemType
        var inode: UInt64
        var status: FileStatus?
    }

    static func read(_ path: [UInt8], statEach: Bool) -> Result<[Entry], Errno> {
        let opened = withCString(path) { Syscalls.openDirectory($0, relativeTo: AT_FDCWD) }
        let descriptor: CInt
        switch opened {
        case .success(let fd): descriptor = fd
        case .failure(let errno): return .failure(errno)
        }
        guard let stream = fdopendir(descriptor) else {
            let error = Errno(rawValue: errno)
            Syscalls.close(descriptor)
            return .failure(error)
        }
        defer { closedir(stream) }
        let directoryDescriptor = dirfd(stream)
        var entries: [Entry] = []
        while let dirent = readdir(stream) {
            guard let namePointer = cfse_dirent_name(dirent) else { continue }
            if namePointer[0] == 0x2E && (namePointer[1] == 0 || (namePointer[1] == 0x2E && namePointer[2] == 0)) { continue }
            let name = [UInt8](UnsafeRawBufferPointer(start: namePointer, count: strlen(namePointer)))
            var entry = Entry(name: name, type: FileItemType(directoryEntryType: cfse_dirent_type(dirent)), inode: UInt64(dirent.pointee.d_ino))
            if statEach || entry.type == .unknown {
                if case .success(let status) = Syscalls.status(namePointer, relativeTo: directoryDescriptor) {
                    entry.status = status
                    entry.type = status.itemType
                    entry.inode = status.inode
                } else {
                    continue
                }
            }
            entries.append(entry)
        }
        return .success(entries)
    }
}
#endif
