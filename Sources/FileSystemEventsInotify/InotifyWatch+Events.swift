#if os(Linux)
import FileSystemEventsCore
import SystemPackage

extension InotifyWatch {
    /// Translates one kernel read, in order.
    mutating func handle(_ events: [Inotify.Event]) {
        for event in events {
            if let pending = pendingMoveFrom {
                pendingMoveFrom = nil
                if event.mask.contains(.movedTo) && event.cookie == pending.cookie {
                    handleRename(from: pending, to: event)
                    continue
                }
                // Something else came between: the pending half was a move out of the tree.
                handleMoveOut(pending)
            }
            let mask = event.mask
            if mask.contains(.queueOverflow) {
                reconcile(afterOverflow: true)
                continue
            }
            if mask.contains(.ignored) {
                forgetWatch(event.watch)
                continue
            }
            if mask.contains(.movedFrom) {
                // Paired with the IN_MOVED_TO that follows it, by cookie: no timer.
                pendingMoveFrom = event
                continue
            }
            if mask.contains(.movedTo) {
                handleMoveIn(event)
                continue
            }
            guard let target = targets[event.watch] else { continue }
            for index in target.fileRoots { handleFileRoot(index, event) }
            for directory in target.directories { handle(event, in: directory) }
        }
    }

    private mutating func handle(_ event: Inotify.Event, in directory: WatchedDirectory) {
        let mask = event.mask
        if event.name.isEmpty {
            // An event about the watched directory itself. Its parent's watch reports the
            // same change by name, so only a root's own events matter here.
            guard directory.parent == nil, !roots[directory.root].isRemoved else { return }
            if mask.contains(.deleteSelf) || mask.contains(.moveSelf) || mask.contains(.unmount) {
                removeRoot(directory.root)
            } else if mask.contains(.attrib) {
                produced.append(makeEvent(.attributesChanged, root: directory.root, relative: [], type: .directory, inode: nil, synthetic: false))
            }
            return
        }
        if mask.contains(.create) {
            handleCreation(named: event.name, in: directory, isDirectoryHint: mask.contains(.isDirectory), synthetic: false)
        } else if mask.contains(.delete) {
            guard let entry = directory.children.removeValue(forKey: event.name) else { return }
            let path = directory.relativePath.appendingComponent(event.name)
            // Deleted: the kernel has dropped its watch already (IN_IGNORED follows).
            if let child = entry.directory { unwatch(child, droppedByKernel: true) }
            hardLinks.remove(directory, event.name, inode: entry.inode)
            produced.append(makeEvent(.removed, root: directory.root, relative: path, type: entry.type, inode: entry.inode, synthetic: false))
        } else if mask.contains(.modify) || mask.contains(.attrib) {
            guard let entry = directory.children[event.name] else { return }
            let kind: FileSystemEvent.Kind = mask.contains(.modify) ? .modified : .attributesChanged
            if entry.type != .directory || kind == .attributesChanged {
                // Content and attributes belong to the inode: every path of a hard-linked
                // file changed, not only the one the kernel named.
                for (linkDirectory, linkName) in hardLinks.paths(of: entry.inode, at: directory, event.name) {
                    produced.append(
                        makeEvent(kind, root: linkDirectory.root, relative: linkDirectory.relativePath.appendingComponent(linkName),
                              type: entry.type, inode: entry.inode, synthetic: false)
                    )
                }
            }
        } else if mask.contains(.unmount) {
            reconcile(afterOverflow: false)
        }
    }

    /// Items recorded while their path was stale: look at them again, at their current path,
    /// now that the events before them have been applied. A directory is watched and listed
    /// there; a type that turned out different is corrected with a new `created`.
    mutating func verifyUnverified() {
        let pending = unverified
        unverified.removeAll()
        for (directory, name) in pending {
            guard directory.isAttached, !roots[directory.root].isRemoved, var entry = directory.children[name],
                entry.inode == 0 || entry.directory?.isListed == false
            else { continue }
            let path = directory.relativePath.appendingComponent(name)
            guard case .success(let status) = Syscalls.status(roots[directory.root].paths.path(path), followSymlinks: false) else {
                // Not there yet: its removal or rename is still in the queue. Keep it pending;
                // that event re-keys it (rename) or drops it (removal).
                unverified.append((directory, name))
                continue
            }
            if entry.inode == 0 { entry.inode = status.inode }
            if status.itemType != entry.type && status.inode == entry.inode {
                if let child = entry.directory { unwatch(child) }
                entry = WatchedEntry(type: status.itemType, inode: status.inode)
                produced.append(makeEvent(.created, root: directory.root, relative: path, type: status.itemType, inode: status.inode, synthetic: true))
                if status.itemType == .directory && options.isRecursive {
                    entry.directory = WatchedDirectory(parent: directory, name: name, root: directory.root)
                }
            }
            directory.children[name] = entry
            if let child = entry.directory, !child.isListed {
                crawl(child, emitting: true)
            }
        }
    }

    /// A new item in `directory`: report it, and if it is a directory, watch it and then list
    /// it, so whatever was created inside before the watch existed is reported too.
    mutating func handleCreation(named name: [UInt8], in directory: WatchedDirectory, isDirectoryHint: Bool, synthetic: Bool) {
        let root = directory.root
        let parentPath = directory.relativePath
        let path = parentPath.appendingComponent(name)
        let absolute = roots[root].paths.path(path)
        guard case .success(let status) = Syscalls.status(absolute, followSymlinks: false) else {
            // Not at the path the model knows, yet. It may be gone (its removal follows in the
            // queue), or an ancestor may have been renamed by an event not read yet. Never drop
            // it: record it as the kernel described it and verify it once the queue is drained.
            let type: FileItemType = isDirectoryHint ? .directory : .file
            guard options.filter.admits(relativePath: path, name: name, isDirectory: isDirectoryHint) else { return }
            if directory.children[name] != nil { return }
            var entry = WatchedEntry(type: type, inode: 0)
            if isDirectoryHint && options.isRecursive {
                entry.directory = WatchedDirectory(parent: directory, name: name, root: root)
            }
            directory.children[name] = entry
            unverified.append((directory, name))
            produced.append(makeEvent(.created, root: root, relative: path, type: type, inode: nil, synthetic: synthetic))
            return
        }
        var type = status.itemType
        var followed = false
        if options.followsSymlinks && type == .symlink,
            case .success(let target) = Syscalls.status(absolute, followSymlinks: true), target.itemType == .directory
        {
            type = .directory
            followed = true
        }
        guard options.filter.admits(relativePath: path, name: name, isDirectory: type == .directory) else { return }
        if let existing = directory.children[name] {
            // Already reported, by the listing of a directory that was new (watch, then list).
            if existing.inode == status.inode && existing.type == type { return }
            if let child = existing.directory { unwatch(child) }
            hardLinks.remove(directory, name, inode: existing.inode)
        }
        var entry = WatchedEntry(type: followed ? .directory : type, inode: status.inode)
        produced.append(makeEvent(.created, root: root, relative: path, type: entry.type, inode: status.inode, synthetic: synthetic))
        if entry.type == .file && status.linkCount > 1 {
            hardLinks.add(directory, name, inode: status.inode, searchingFrom: roots.compactMap(\.tree))
        }
        if entry.type == .directory && options.isRecursive {
            let child = WatchedDirectory(parent: directory, name: name, root: root)
            entry.directory = child
            directory.children[name] = entry
            crawl(child, emitting: true)
        } else {
            directory.children[name] = entry
        }
    }

    private mutating func handleRename(from source: Inotify.Event, to destination: Inotify.Event) {
        let sourceDirectory = targets[source.watch]?.directories.first
        let destinationDirectory = targets[destination.watch]?.directories.first
        for index in targets[source.watch]?.fileRoots ?? [] { handleFileRoot(index, source) }
        for index in targets[destination.watch]?.fileRoots ?? [] { handleFileRoot(index, destination) }
        guard let sourceDirectory, let entry = sourceDirectory.children[source.name] else {
            // Moved from somewhere we do not know (outside, excluded, or never seen): a move in.
            if let destinationDirectory {
                handleCreation(named: destination.name, in: destinationDirectory, isDirectoryHint: destination.mask.contains(.isDirectory), synthetic: false)
            }
            return
        }
        guard let destinationDirectory, destinationDirectory.root == sourceDirectory.root else {
            handleMoveOut(source)
            if let destinationDirectory {
                handleCreation(named: destination.name, in: destinationDirectory, isDirectoryHint: destination.mask.contains(.isDirectory), synthetic: false)
            }
            return
        }
        let newPath = destinationDirectory.relativePath.appendingComponent(destination.name)
        guard options.filter.admits(relativePath: newPath, name: destination.name, isDirectory: entry.type == .directory) else {
            handleMoveOut(source)
            return
        }
        let oldPath = sourceDirectory.relativePath.appendingComponent(source.name)
        sourceDirectory.children[source.name] = nil
        if let replaced = destinationDirectory.children[destination.name] {
            if let child = replaced.directory { unwatch(child) }
            hardLinks.remove(destinationDirectory, destination.name, inode: replaced.inode)
        }
        destinationDirectory.children[destination.name] = entry
        if let child = entry.directory {
            child.parent = destinationDirectory
            child.name = destination.name
        }
        hardLinks.move(inode: entry.inode, from: sourceDirectory, source.name, to: destinationDirectory, destination.name)
        // Still to be verified or listed: the verification must look for it under its new name.
        for index in unverified.indices where unverified[index].0 === sourceDirectory && unverified[index].1 == source.name {
            unverified[index] = (destinationDirectory, destination.name)
        }
        produced.append(
            makeEvent(.renamed, root: sourceDirectory.root, relative: newPath, previous: oldPath, type: entry.type, inode: entry.inode, synthetic: false)
        )
    }

    mutating func handleMoveOut(_ source: Inotify.Event) {
        for index in targets[source.watch]?.fileRoots ?? [] { handleFileRoot(index, source) }
        guard let directory = targets[source.watch]?.directories.first,
            let entry = directory.children.removeValue(forKey: source.name)
        else { return }
        if let child = entry.directory { unwatch(child) }
        hardLinks.remove(directory, source.name, inode: entry.inode)
        let path = directory.relativePath.appendingComponent(source.name)
        produced.append(makeEvent(.removed, root: directory.root, relative: path, type: entry.type, inode: entry.inode, synthetic: false))
    }

    private mutating func handleMoveIn(_ destination: Inotify.Event) {
        for index in targets[destination.watch]?.fileRoots ?? [] { handleFileRoot(index, destination) }
        guard let directory = targets[destination.watch]?.directories.first else { return }
        handleCreation(named: destination.name, in: directory, isDirectoryHint: destination.mask.contains(.isDirectory), synthetic: false)
    }

    /// A single watched file, seen through its parent directory's watch.
    private mutating func handleFileRoot(_ index: Int, _ event: Inotify.Event) {
        guard !roots[index].isRemoved, case .file(let parentWatch, let name, let type, let inode) = roots[index].kind,
            event.name == name
        else { return }
        let mask = event.mask
        if mask.contains(.delete) || mask.contains(.movedFrom) {
            // Deleted, or renamed away: the watched file is gone.
            removeRoot(index)
        } else if mask.contains(.movedTo) || mask.contains(.create) {
            // An editor's atomic save renamed a new file over it: keep watching the new one.
            guard case .success(let status) = Syscalls.status(roots[index].path) else { return }
            if status.inode == inode { return }
            roots[index].kind = .file(parentWatch: parentWatch, name: name, type: status.itemType, inode: status.inode)
            produced.append(makeEvent(.created, root: index, relative: [], type: status.itemType, inode: status.inode, synthetic: false))
        } else if mask.contains(.modify) {
            produced.append(makeEvent(.modified, root: index, relative: [], type: type, inode: inode, synthetic: false))
        } else if mask.contains(.attrib) {
            produced.append(makeEvent(.attributesChanged, root: index, relative: [], type: type, inode: inode, synthetic: false))
        }
    }

    /// The root is gone (deleted, moved away, unmounted): report it and stop watching it.
    mutating func removeRoot(_ index: Int) {
        guard !roots[index].isRemoved else { return }
        roots[index].isRemoved = true
        let type: FileItemType
        switch roots[index].kind {
        case .directory(let tree):
            type = .directory
            unwatch(tree)
        case .file(let parentWatch, _, let fileType, _):
            type = fileType
            targets[parentWatch]?.fileRoots.removeAll { $0 == index }
            releaseIfUnused(parentWatch)
        }
        produced.append(makeEvent(.rootRemoved, root: index, relative: [], type: type, inode: nil, synthetic: false))
    }

    // MARK: Watch bookkeeping

    /// Stops watching a subtree that left the tree (or was replaced).
    ///
    /// - Parameter droppedByKernel: the directory was deleted, so the kernel removed its
    ///   watch itself (and those of anything still recorded below it); asking again would
    ///   only fail, and libinotifytools prints about it.
    mutating func unwatch(_ directory: WatchedDirectory, droppedByKernel: Bool = false) {
        directory.forEachDirectory { node in
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
        if !droppedByKernel { kernel?.removeWatch(watch) }
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
