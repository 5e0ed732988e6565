#if os(Linux)
import Glibc
import FileSystemEventsCore
import SystemPackage

// A root that is a file is watched by name, as `tail -F` follows a file: through its
// directory's watch, so it may disappear (`removed`) and appear again (`created`), and a new
// file renamed over it (an editor's atomic save, a log rotation) is `created` in its place.
// The watch of a file root ends (`rootRemoved`) only when its directory goes away.
//
// A root that is a symlink to a file is followed, as a symlink to a directory is: its events
// are those of the file the link leads to. The target's directory is watched too, for the
// target's name, so a write through any name of that file is heard; the link re-pointed (or
// replaced) moves that second watch to the new target's directory.
//
// A file root may have, or be given while watched, another hard link in another directory,
// and be written through it: neither directory watch hears that. So the file itself is
// watched too (``FileRoot/inodeWatch``), one watch more per file root: it hears `link(2)` (a
// change of link count) and writes through any name. A write through the root's own name is
// heard twice, by the directory and by the file, and told once (``ReportedChange``).
extension InotifyWatch {
    /// A single watched file, seen through its parent directory's watch (and, for a symlink,
    /// its target's directory's watch).
    struct FileRoot {
        var parentWatch: CInt
        /// The root's own name in its directory.
        var name: [UInt8]
        var type: FileItemType
        /// The inode of the file the root names now; 0 while there is none.
        var inode: UInt64
        /// While the root is a symlink: the watch of the directory its target lives in (or
        /// would appear in), and the target's name there.
        var target: (watch: CInt, name: [UInt8])?
        /// The directory the root's name is in, as watched (``InotifyWatch/checkRootPaths()``).
        var parentIdentity: FileIdentity?
        /// The watch on the file itself, while the root names a regular file.
        var inodeWatch: CInt?

        /// Whether `event` is about the root's name, or about its target's.
        func role(of event: Inotify.Event) -> Role? {
            if event.watch == parentWatch && event.name == name { return .name }
            if let target, event.watch == target.watch, event.name == target.name { return .target }
            if event.name.isEmpty {
                if event.watch == inodeWatch { return .inode }
                if event.watch == parentWatch { return .directory }
                if let target, event.watch == target.watch { return .targetDirectory }
            }
            return nil
        }

        enum Role {
            /// The root's name in its directory (the link itself, for a symlink root).
            case name
            /// The target's name in the target's directory.
            case target
            /// The root's directory itself.
            case directory
            /// The target's directory itself.
            case targetDirectory
            /// The file itself (``inodeWatch``).
            case inode
        }
    }

    mutating func addFileRoot(_ path: FilePath, index: Int, status: FileStatus) throws(FileSystemEventsError) {
        let bytes = path.bytes
        let parentBytes = path.removingLastComponent().bytes
        let name = path.lastComponent.map { FilePath(root: nil, [$0]).bytes } ?? []
        let watch: CInt
        switch watchDirectory(parentBytes) {
        case .success(let found): watch = found
        case .failure(let errno): throw watchFailure(errno, path: parentBytes)
        }
        var file = FileRoot(parentWatch: watch, name: name, type: status.itemType, inode: status.inode)
        if case .success(let parent) = Syscalls.status(atPath: parentBytes, followSymlinks: true) { file.parentIdentity = parent.identity }
        roots.append(WatchedRoot(path: path, paths: PathBuilder(root: path), bytes: bytes, device: status.device, kind: .file(file)))
        targets[watch, default: WatchTargets()].fileRoots.append(index)
        retargetFileRoot(index)
        watchFileRootInode(index)
    }

    /// Puts a watch on the regular file a file root names, moving it when another file takes
    /// the name and taking it off when none does.
    mutating func watchFileRootInode(_ index: Int) {
        guard !roots[index].isRemoved, case .file(var file) = roots[index].kind else { return }
        var wanted: (watch: CInt, inode: UInt64)?
        if file.inode != 0, case .success(let pinned) = Syscalls.open(atPath: roots[index].bytes, flags: Syscalls.pathOnlyFlag | O_CLOEXEC) {
            defer { Syscalls.close(pinned) }
            if case .success(let status) = Syscalls.status(ofDescriptor: pinned), status.itemType == .file, status.inode == file.inode {
                let path = roots[index].bytes
                switch addFileWatch(pinned: pinned, path: path) {
                case .success(let watch) where targets[watch]?.directories.isEmpty ?? true:
                    wanted = (watch, status.inode)
                case .failure(let errno):
                    diagnose(.unwatchableHardLink, roots[index].bytes, errno: errno,
                             "cannot watch the file \(roots[index].path) itself (\(errno)); writes through another hard link of it are not reported")
                default:
                    break
                }
            }
        }
        let old = file.inodeWatch
        if old == wanted?.watch { return }
        if let wanted, !(targets[wanted.watch]?.fileRoots.contains(index) ?? false) {
            targets[wanted.watch, default: WatchTargets()].fileRoots.append(index)
        }
        file.inodeWatch = wanted?.watch
        roots[index].kind = .file(file)
        if let old {
            targets[old]?.fileRoots.removeAll { $0 == index }
            releaseIfUnused(old)
        }
    }

    /// Opens `directory` and adds a watch to it (through the descriptor, so the watch is on
    /// the directory that was opened).
    private mutating func watchDirectory(_ directory: [UInt8]) -> Result<CInt, Errno> {
        let descriptor: CInt
        switch Syscalls.openDirectory(atPath: directory, followSymlinks: true) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): return .failure(errno)
        }
        defer { Syscalls.close(descriptor) }
        return addWatch(descriptor: descriptor, absolute: { directory })
    }

    /// Points the second watch of a symlink root at where its target lives now, or drops it
    /// when the root is no longer a symlink. A target directory that cannot be watched leaves
    /// the root watched by its name only, and says so.
    mutating func retargetFileRoot(_ index: Int) {
        guard !roots[index].isRemoved, case .file(var file) = roots[index].kind else { return }
        let location = Syscalls.linkTargetLocation(roots[index].bytes)
        var newTarget: (watch: CInt, name: [UInt8])?
        if let location {
            switch watchDirectory(location.directory) {
            case .success(let watch): newTarget = (watch, location.name)
            case .failure(.noSpace):
                pendingFailure = pendingFailure ?? watchFailure(.noSpace, path: location.directory)
            case .failure(let errno):
                diagnose(.unreadableDirectory, location.directory, errno: errno,
                         "\(FilePath(bytes: roots[index].bytes)) is a symlink whose target's directory \(FilePath(bytes: location.directory)) cannot be watched (\(errno)); changes made to the target through its other names will be missed")
            }
        }
        let old = file.target
        if old?.watch == newTarget?.watch && old?.name == newTarget?.name { return }
        if let newTarget, newTarget.watch != file.parentWatch, !(targets[newTarget.watch]?.fileRoots.contains(index) ?? false) {
            targets[newTarget.watch, default: WatchTargets()].fileRoots.append(index)
        }
        file.target = newTarget
        roots[index].kind = .file(file)
        if let old, old.watch != file.parentWatch, old.watch != newTarget?.watch {
            targets[old.watch]?.fileRoots.removeAll { $0 == index }
            releaseIfUnused(old.watch)
        }
    }

    mutating func handleFileRoot(_ index: Int, _ event: Inotify.Event) {
        guard !roots[index].isRemoved, case .file(let file) = roots[index].kind, let role = file.role(of: event) else { return }
        let mask = event.mask
        switch role {
        case .directory:
            if mask.contains(.deleteSelf) || mask.contains(.moveSelf) || mask.contains(.unmount) {
                removeRoot(index)
            }
            return
        case .targetDirectory:
            // The target's directory went away: so did the file the link leads to.
            if mask.contains(.deleteSelf) || mask.contains(.moveSelf) || mask.contains(.unmount) {
                refreshFileRoot(index, changedSince: nil)
            }
            return
        case .name where file.target != nil:
            // The link itself: removed, replaced or re-pointed. Its own attributes are not
            // the followed file's.
            if mask.contains(.delete) || mask.contains(.movedFrom) || mask.contains(.movedTo) || mask.contains(.create) {
                refreshFileRoot(index, changedSince: nil)
            }
            return
        case .inode:
            handleFileRootInode(index, file, event)
            return
        case .name, .target:
            break
        }
        let identity = FileIdentity(device: roots[index].device, inode: file.inode)
        if mask.contains(.delete) || mask.contains(.movedFrom) {
            guard file.inode != 0 else { return }
            if role == .name {
                var gone = file
                gone.inode = 0
                roots[index].kind = .file(gone)
                produced.append(makeEvent(.removed, root: index, relative: [], type: file.type, identity: identity, synthetic: false))
            } else {
                // The target's name is gone; the link may lead elsewhere now (a chain).
                refreshFileRoot(index, changedSince: nil)
            }
        } else if mask.contains(.movedTo) || mask.contains(.create) {
            refreshFileRoot(index, changedSince: nil)
        } else if file.inode != 0 && mask.contains(.modify) {
            produced.append(makeEvent(.modified, root: index, relative: [], type: file.type, identity: identity, synthetic: false))
            lastReportedChange = ReportedChange(identity: identity, kind: .modified)
        } else if file.inode != 0 && mask.contains(.attrib) {
            produced.append(makeEvent(.attributesChanged, root: index, relative: [], type: file.type, identity: identity, synthetic: false))
            lastReportedChange = ReportedChange(identity: identity, kind: .attributesChanged)
        }
    }

    /// An event of the watch on a file root's file itself: a write or a change of attributes
    /// made through another name (one made through the root's own name was told by its
    /// directory's watch, the event just before).
    private mutating func handleFileRootInode(_ index: Int, _ file: FileRoot, _ event: Inotify.Event) {
        let mask = event.mask
        let identity = FileIdentity(device: roots[index].device, inode: file.inode)
        if mask.contains(.deleteSelf) {
            // Every name is gone (the root's own removal is told by its directory); the kernel
            // drops the watch.
            if let watch = file.inodeWatch {
                var updated = file
                updated.inodeWatch = nil
                roots[index].kind = .file(updated)
                targets[watch]?.fileRoots.removeAll { $0 == index }
            }
            return
        }
        guard file.inode != 0 else { return }
        if mask.contains(.modify) && !isRepeat(.modified, of: identity) {
            produced.append(makeEvent(.modified, root: index, relative: [], type: file.type, identity: identity, synthetic: false))
        }
        if mask.contains(.attrib) {
            if !isRepeat(.attributesChanged, of: identity) {
                produced.append(makeEvent(.attributesChanged, root: index, relative: [], type: file.type, identity: identity, synthetic: false))
            }
        }
    }

    /// Looks at a file root again: there now, gone, or another file in its place (for a
    /// symlink root, also where its target lives now).
    mutating func refreshFileRoot(_ index: Int, changedSince: Int64?) {
        retargetFileRoot(index)
        guard !roots[index].isRemoved, case .file(var file) = roots[index].kind else { return }
        switch Syscalls.status(atPath: roots[index].bytes, followSymlinks: true) {
        case .success(let status):
            let identity = FileIdentity(device: status.device, inode: status.inode)
            if status.inode != file.inode {
                file.type = status.itemType
                file.inode = status.inode
                roots[index].kind = .file(file)
                produced.append(makeEvent(.created, root: index, relative: [], type: status.itemType, identity: identity, synthetic: changedSince != nil))
                watchFileRootInode(index)
            } else if let since = changedSince, status.changeTime >= since {
                let kind: FileSystemEvent.Kind = status.modificationTime >= since ? .modified : .attributesChanged
                produced.append(makeEvent(kind, root: index, relative: [], type: file.type, identity: identity, synthetic: true))
            }
        case .failure:
            guard file.inode != 0 else { return }
            let identity = FileIdentity(device: roots[index].device, inode: file.inode)
            let type = file.type
            file.inode = 0
            roots[index].kind = .file(file)
            produced.append(makeEvent(.removed, root: index, relative: [], type: type, identity: identity, synthetic: changedSince != nil))
            watchFileRootInode(index)
        }
    }

    /// The watches a file root holds, for releasing them with the root.
    func watches(of file: FileRoot) -> [CInt] {
        var watches = [file.parentWatch]
        if let target = file.target, target.watch != file.parentWatch { watches.append(target.watch) }
        if let inodeWatch = file.inodeWatch { watches.append(inodeWatch) }
        return watches
    }
}
#endif
