#if os(Linux)
import Glibc
import FileSystemEventsCore
import SystemPackage

// Symlinks to files inside the tree, under `followsSymlinks`.
//
// Following a link means treating it as what it leads to: a link to a file is reported as a
// file, and a write to that file (wherever it is, inside the tree or not) is reported at the
// link's path, as polling sees it by following the link on every scan. The kernel reports a
// write to the directory that holds the file under the file's own name, so the link's
// directory hears nothing. Each such link therefore gets a watch of its own, added through the
// link (no `IN_DONT_FOLLOW`): a watch on the target's inode. Two links to one file share it.
//
// That watch also says when the target stops being the link's file: deleted (`IN_ATTRIB` for
// the link count, then `IN_DELETE_SELF`), replaced by an atomic save, moved away. The link is
// then looked at again: a new file behind it is a `modified` (its content changed, as far as
// a reader of the link can tell), and a link that no longer leads to a file is reported
// `created` as the symlink it now is (a dangling link's target coming back is seen when the
// link itself changes, or by a rescan).

/// A name in the model whose file a watch of its own is on: a followed symlink to a file, or a
/// file with a hard link out of view (`InotifyWatch+HardLinkWatches.swift`).
struct FollowedFileLink {
    enum Kind {
        /// A symlink followed to a file: the watch is on the file it leads to.
        case symlink
        /// A file with another name out of view: the watch is on the file itself.
        case hardLink
    }

    let kind: Kind
    let directory: WatchedDirectory
    let name: [UInt8]
    /// The model's entry's inode, to tell it from a later item of that name: the link's own
    /// for a symlink, the file's for a hard link.
    let inode: UInt64
    /// The file the link led to when the watch was added.
    let target: FileIdentity

    init(_ kind: Kind = .symlink, directory: WatchedDirectory, name: [UInt8], inode: UInt64, target: FileIdentity) {
        self.kind = kind
        self.directory = directory
        self.name = name
        self.inode = inode
        self.target = target
    }

    var isLive: Bool {
        guard directory.isAttached, let entry = directory.children[name] else { return false }
        return entry.inode == inode && entry.type == .file
    }
}

extension InotifyWatch {
    /// What a watch on a link's target listens for: its content, its attributes and link
    /// count, and its end; and, when settling, its writers' closes, since a writer at work
    /// through a name out of view ends only there (``noteWriteActivity(_:)``). Not
    /// `IN_ONLYDIR` (it is a file), not `IN_DONT_FOLLOW` (the watch is added through the link).
    var fileLinkMask: Inotify.Mask {
        settle == nil ? [.modify, .attrib, .deleteSelf, .moveSelf] : [.modify, .attrib, .deleteSelf, .moveSelf, .closeWrite]
    }

    /// What came of watching a link's target.
    enum FileLinkWatch {
        /// Watched: the link is a file.
        case watched
        /// The link leads to no file (dangling, a loop, a directory or something else now).
        case notAFile
        /// A file, which this process may not watch (`inotify_add_watch` needs read
        /// permission; `stat` does not): a file still, whose writes go unreported here.
        case unwatchable(Errno)
    }

    /// Watches the file that the symlink `name` in `directory` leads to.
    ///
    /// The target is opened `O_PATH` through the link, checked to be a regular file through
    /// that descriptor, and watched through `/proc/self/fd`: a link re-pointed in between (at a
    /// directory this watch already watches, say) cannot make the kernel hand back, and
    /// re-mask, that directory's watch.
    ///
    /// - Parameter descriptor: `directory`, open already, or `nil` to open it.
    mutating func watchFileLinkTarget(_ name: [UInt8], in directory: WatchedDirectory, linkInode: UInt64, descriptor: CInt?) -> FileLinkWatch {
        var opened: CInt? = nil
        defer { if let opened { Syscalls.close(opened) } }
        let fd: CInt
        if let descriptor {
            fd = descriptor
        } else {
            guard case .opened(let found, _) = open(directory) else { return .notAFile }
            opened = found
            fd = found
        }
        guard case .success(let pinned) = withCString(name, { Syscalls.openPathOnly($0, relativeTo: fd) }) else { return .notAFile }
        defer { Syscalls.close(pinned) }
        guard case .success(let target) = Syscalls.status(ofDescriptor: pinned), target.itemType == .file else { return .notAFile }
        let absolute = roots[directory.root].paths.bytes(directory.relativePath.appendingComponent(name))
        let watch: CInt
        switch addFileWatch(pinned: pinned, path: absolute) {
        case .success(let added): watch = added
        case .failure(.noSpace):
            pendingFailure = pendingFailure ?? watchFailure(.noSpace, path: absolute)
            return .unwatchable(.noSpace)
        case .failure(let errno):
            return .unwatchable(errno)
        case .none:
            return .notAFile
        }
        if let existing = targets[watch], !existing.directories.isEmpty || !existing.fileRoots.isEmpty {
            // The kernel gave back a descriptor that stands for something else (it cannot,
            // for a regular file, but a wrong mask on a directory watch would blind it).
            return .unwatchable(.invalidArgument)
        }
        dropFileLink(name, in: directory)
        let link = FollowedFileLink(.symlink, directory: directory, name: name, inode: linkInode, target: target.identity)
        targets[watch, default: WatchTargets()].fileLinks.append(link)
        fileLinkWatches[NameInModel(directory, name)] = watch
        return .watched
    }

    /// Whether a followed link found at `name` in `directory` stays a file in the model:
    /// watched, or a file this process may not watch (reported once).
    mutating func followFileLink(_ name: [UInt8], in directory: WatchedDirectory, linkInode: UInt64) -> Bool {
        switch watchFileLinkTarget(name, in: directory, linkInode: linkInode, descriptor: nil) {
        case .watched:
            return true
        case .notAFile:
            return false
        case .unwatchable(let errno):
            let absolute = roots[directory.root].paths.bytes(directory.relativePath.appendingComponent(name))
            diagnose(.unwatchableLinkTarget, absolute, errno: errno,
                     "cannot watch the file \(FilePath(bytes: absolute)) leads to (\(errno)); it is reported as a file, but changes to it are not")
            return true
        }
    }

    /// Forgets the followed link at `name` in `directory`, if any (it was removed, replaced or
    /// moved out), releasing its watch unless another link shares it.
    mutating func dropFileLink(_ name: [UInt8], in directory: WatchedDirectory) {
        guard !fileLinkWatches.isEmpty, let watch = fileLinkWatches.removeValue(forKey: NameInModel(directory, name)) else { return }
        if lastLinkFanOut?.watch == watch, let links = targets[watch]?.fileLinks {
            // Where the change last told at the file's names stands, once this name is gone.
            if let index = links.firstIndex(where: { $0.directory === directory && $0.name == name }),
               !links.contains(where: { $0.kind != .hardLink }) {
                lastLinkFanOut?.forget(linkAt: index, in: links)
            } else {
                lastLinkFanOut = nil
            }
        }
        targets[watch]?.fileLinks.removeAll { $0.directory === directory && $0.name == name }
        releaseIfUnused(watch)
    }

    /// ``dropFileLink(_:in:)`` for each of `links`, each watch's list of links gone through once
    /// rather than once per link: a file with thousands of names that needs no watch of its
    /// own any more dropped them one by one in time quadratic in their number.
    mutating func dropFileLinks(_ links: [FollowedFileLink]) {
        guard !fileLinkWatches.isEmpty else { return }
        var dropped: [CInt: Set<NameInModel>] = [:]
        for link in links {
            let key = NameInModel(link.directory, link.name)
            if let watch = fileLinkWatches.removeValue(forKey: key) { dropped[watch, default: []].insert(key) }
        }
        for (watch, keys) in dropped {
            if lastLinkFanOut?.watch == watch { lastLinkFanOut = nil }
            targets[watch]?.fileLinks.removeAll { keys.contains(NameInModel($0.directory, $0.name)) }
            releaseIfUnused(watch)
        }
    }

    /// The followed link at `name` in `source` is now `destinationName` in `destination`.
    mutating func moveFileLink(_ name: [UInt8], in source: WatchedDirectory, to destinationName: [UInt8], in destination: WatchedDirectory) {
        guard !fileLinkWatches.isEmpty, let watch = fileLinkWatches.removeValue(forKey: NameInModel(source, name)) else { return }
        guard var target = targets[watch], let index = target.fileLinks.firstIndex(where: { $0.directory === source && $0.name == name }) else { return }
        let old = target.fileLinks[index]
        target.fileLinks[index] = FollowedFileLink(old.kind, directory: destination, name: destinationName, inode: old.inode, target: old.target)
        targets[watch] = target
        fileLinkWatches[NameInModel(destination, destinationName)] = watch
    }

    /// The items at `first` in `firstDirectory` and `second` in `secondDirectory` were swapped
    /// (the model has them swapped already); followed links among them go along. A hard-linked
    /// file keeps its watch under its new name (it is the same file); a symlink is looked
    /// through again from its new place.
    mutating func exchangeFileLinks(_ first: [UInt8], in firstDirectory: WatchedDirectory, with second: [UInt8], in secondDirectory: WatchedDirectory) {
        guard !fileLinkWatches.isEmpty else { return }
        let firstTaken = takeFileLink(first, in: firstDirectory)
        let secondTaken = takeFileLink(second, in: secondDirectory)
        guard firstTaken != nil || secondTaken != nil else { return }
        let moves = [(firstTaken, second, secondDirectory), (secondTaken, first, firstDirectory)]
        for (taken, name, directory) in moves {
            guard let (watch, link) = taken, link.kind == .hardLink else { continue }
            targets[watch, default: WatchTargets()].fileLinks.append(
                FollowedFileLink(.hardLink, directory: directory, name: name, inode: link.inode, target: link.target))
            fileLinkWatches[NameInModel(directory, name)] = watch
        }
        for (taken, name, directory) in moves {
            guard let (_, link) = taken, link.kind == .symlink, let entry = directory.children[name] else { continue }
            if !followFileLink(name, in: directory, linkInode: entry.inode) {
                // A relative link that leads nowhere from its new place: the symlink it is.
                directory.children[name]?.type = .symlink
                produced.append(makeEvent(.created, root: directory.root, relative: directory.relativePath.appendingComponent(name),
                                          type: .symlink, identity: FileIdentity(device: directory.device, inode: entry.inode), synthetic: true))
            }
        }
        for taken in [firstTaken, secondTaken] {
            if let (watch, _) = taken { releaseIfUnused(watch) }
        }
    }

    /// Takes the followed link at `name` in `directory` out of the tables, leaving its watch
    /// in place for the caller to reuse or release.
    private mutating func takeFileLink(_ name: [UInt8], in directory: WatchedDirectory) -> (CInt, FollowedFileLink)? {
        guard let watch = fileLinkWatches.removeValue(forKey: NameInModel(directory, name)),
              let index = targets[watch]?.fileLinks.firstIndex(where: { $0.directory === directory && $0.name == name }),
              let link = targets[watch]?.fileLinks.remove(at: index)
        else { return nil }
        return (watch, link)
    }

    /// The followed link just moved to `name` in `directory` (another directory than before):
    /// a relative link may lead to another file, or to none, from there.
    mutating func relookMovedFileLink(_ name: [UInt8], in directory: WatchedDirectory) {
        guard !fileLinkWatches.isEmpty, let watch = fileLinkWatches[NameInModel(directory, name)],
              let link = targets[watch]?.fileLinks.first(where: { $0.directory === directory && $0.name == name }),
              link.kind == .symlink  // a hard link is the file itself, wherever it is
        else { return }
        relook(at: link)
    }

    /// Forgets every followed link directly in `directory` (it left the model).
    mutating func dropFileLinks(in directory: WatchedDirectory) {
        guard !fileLinkWatches.isEmpty else { return }
        for name in directory.children.keys where fileLinkWatches[NameInModel(directory, name)] != nil {
            dropFileLink(name, in: directory)
        }
    }

    /// An event of the watch on links' target.
    mutating func handleFileLinkTarget(_ event: Inotify.Event) {
        guard let links = targets[event.watch]?.fileLinks, !links.isEmpty else { return }
        let mask = event.mask
        let live = links.filter(\.isLive)
        if live.count != links.count {
            // Links that left the model without being seen to (inside a removed subtree).
            for link in links where !link.isLive {
                fileLinkWatches[NameInModel(link.directory, link.name)] = nil
            }
            targets[event.watch]?.fileLinks = live
            if lastLinkFanOut?.watch == event.watch { lastLinkFanOut = nil }
        }
        if mask.contains(.ignored) {
            // The kernel dropped the watch (the file is gone): look again through each symlink.
            // A hard-linked file's names were removed by their own events.
            targets[event.watch]?.fileLinks = []
            for link in live { fileLinkWatches[NameInModel(link.directory, link.name)] = nil }
            releaseIfUnused(event.watch, droppedByKernel: true)
            for link in live where link.kind == .symlink { relook(at: link) }
            return
        }
        if live.isEmpty {
            releaseIfUnused(event.watch)
            return
        }
        let symlinks = live.filter { $0.kind == .symlink }
        if mask.contains(.modify) {
            for link in symlinks { report(.modified, link) }
        }
        if mask.contains(.attrib) || mask.contains(.deleteSelf) || mask.contains(.moveSelf) {
            for link in symlinks { relook(at: link, attributesChanged: mask.contains(.attrib)) }
        }
        if symlinks.count != live.count {
            handleHardLinkedFile(event, live.filter { $0.kind == .hardLink })
        }
    }

    /// Looks through `link` again after its target may have changed identity: the same file
    /// (an attribute change), another file (re-watched, `modified`), or no file at all (the
    /// link is a symlink again).
    private mutating func relook(at link: FollowedFileLink, attributesChanged: Bool = false) {
        guard link.isLive else { return }
        var target: FileStatus?
        guard case .opened(let fd, _) = open(link.directory) else { return }
        let linkNow = withCString(link.name) { Syscalls.status($0, relativeTo: fd) }
        if case .success(let found) = withCString(link.name, { Syscalls.status($0, relativeTo: fd, followSymlinks: true) }) {
            target = found
        }
        Syscalls.close(fd)
        // The name holds another item now (the link was renamed or removed, and the queue
        // still holds the events that say so): those events will bring the model along;
        // concluding anything from the disk here would run ahead of them.
        guard case .success(let current) = linkNow, current.inode == link.inode, current.itemType == .symlink else { return }
        if let target, target.itemType == .file, target.identity == link.target {
            if attributesChanged { report(.attributesChanged, link) }
            return
        }
        if let target, target.itemType == .file, followFileLink(link.name, in: link.directory, linkInode: link.inode) {
            report(.modified, link)
            return
        }
        // No file behind the link now: it is the symlink it is.
        dropFileLink(link.name, in: link.directory)
        link.directory.children[link.name]?.type = .symlink
        produced.append(makeEvent(.created, root: link.directory.root, relative: link.directory.relativePath.appendingComponent(link.name),
                                  type: .symlink, identity: FileIdentity(device: link.directory.device, inode: link.inode), synthetic: true))
    }

    /// Tells `kind` at `link`'s place: a symlink with its own identity, a hard-linked file with
    /// the file's.
    mutating func report(_ kind: FileSystemEvent.Kind, _ link: FollowedFileLink) {
        let identity = link.kind == .hardLink ? link.target : FileIdentity(device: link.directory.device, inode: link.inode)
        produced.append(makeEvent(kind, root: link.directory.root, relative: link.directory.relativePath.appendingComponent(link.name),
                                  type: .file, identity: identity, synthetic: false))
    }

    /// Adds the watch of a file itself (``fileLinkMask``) to the file open `O_PATH` at `pinned`:
    /// through `/proc/self/fd`, so that what was checked through the descriptor is what is
    /// watched, or at `path` (the file's path) where `/proc` is not mounted. `nil` without a
    /// kernel.
    mutating func addFileWatch(pinned: CInt, path: [UInt8]) -> Result<CInt, Errno>? {
        guard kernel != nil else { return nil }
        return addKernelWatch(path: ProcessDescriptors.areVisible ? Syscalls.processDescriptorPath(pinned) : path, mask: fileLinkMask)
    }
}
#endif
