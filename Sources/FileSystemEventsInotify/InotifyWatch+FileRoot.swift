#if os(Linux)
import FileSystemEventsCore
import SystemPackage

// A root that is a file is watched by name, as `tail -F` follows a file: through its
// directory's watch, so it may disappear (`removed`) and appear again (`created`), and a new
// file renamed over it (an editor's atomic save, a log rotation) is `created` in its place.
// The watch of a file root ends (`rootRemoved`) only when its directory goes away.
extension InotifyWatch {
    mutating func addFileRoot(_ path: FilePath, index: Int, status: FileStatus) throws(FileSystemEventsError) {
        let bytes = path.bytes
        let parent = path.removingLastComponent()
        let name = path.lastComponent.map { FilePath(root: nil, [$0]).bytes } ?? []
        let parentBytes = parent.bytes
        let descriptor: CInt
        switch Syscalls.openDirectory(atPath: parentBytes, followSymlinks: true) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): throw watchFailure(errno, path: parentBytes)
        }
        defer { Syscalls.close(descriptor) }
        let watch: CInt
        switch addWatch(descriptor: descriptor, absolute: parentBytes) {
        case .success(let found): watch = found
        case .failure(let errno): throw watchFailure(errno, path: parentBytes)
        }
        roots.append(
            WatchedRoot(path: path, paths: PathBuilder(root: path), bytes: bytes, device: status.device,
                        kind: .file(parentWatch: watch, name: name, type: status.itemType, inode: status.inode))
        )
        targets[watch, default: WatchTargets()].fileRoots.append(index)
    }

    /// A single watched file, seen through its parent directory's watch.
    mutating func handleFileRoot(_ index: Int, _ event: Inotify.Event) {
        guard !roots[index].isRemoved, case .file(let parentWatch, let name, let type, let inode) = roots[index].kind else { return }
        let mask = event.mask
        if event.name.isEmpty {
            if mask.contains(.deleteSelf) || mask.contains(.moveSelf) || mask.contains(.unmount) {
                removeRoot(index)
            }
            return
        }
        guard event.name == name else { return }
        let identity = FileIdentity(device: roots[index].device, inode: inode)
        if mask.contains(.delete) || mask.contains(.movedFrom) {
            guard inode != 0 else { return }
            roots[index].kind = .file(parentWatch: parentWatch, name: name, type: type, inode: 0)
            produced.append(makeEvent(.removed, root: index, relative: [], type: type, identity: identity, synthetic: false))
        } else if mask.contains(.movedTo) || mask.contains(.create) {
            refreshFileRoot(index, changedSince: nil)
        } else if inode != 0 && mask.contains(.modify) {
            produced.append(makeEvent(.modified, root: index, relative: [], type: type, identity: identity, synthetic: false))
        } else if inode != 0 && mask.contains(.attrib) {
            produced.append(makeEvent(.attributesChanged, root: index, relative: [], type: type, identity: identity, synthetic: false))
        }
    }

    /// Looks at a file root again: there now, gone, or another file in its place.
    mutating func refreshFileRoot(_ index: Int, changedSince: Int64?) {
        guard !roots[index].isRemoved, case .file(let parentWatch, let name, let type, let inode) = roots[index].kind else { return }
        switch Syscalls.status(atPath: roots[index].bytes, followSymlinks: true) {
        case .success(let status):
            let identity = FileIdentity(device: status.device, inode: status.inode)
            if status.inode != inode {
                roots[index].kind = .file(parentWatch: parentWatch, name: name, type: status.itemType, inode: status.inode)
                produced.append(makeEvent(.created, root: index, relative: [], type: status.itemType, identity: identity, synthetic: changedSince != nil))
            } else if let since = changedSince, status.changeTime >= since {
                let kind: FileSystemEvent.Kind = status.modificationTime >= since ? .modified : .attributesChanged
                produced.append(makeEvent(kind, root: index, relative: [], type: type, identity: identity, synthetic: true))
            }
        case .failure:
            guard inode != 0 else { return }
            roots[index].kind = .file(parentWatch: parentWatch, name: name, type: type, inode: 0)
            produced.append(makeEvent(.removed, root: index, relative: [], type: type,
                                      identity: FileIdentity(device: roots[index].device, inode: inode), synthetic: changedSince != nil))
        }
    }
}
#endif
