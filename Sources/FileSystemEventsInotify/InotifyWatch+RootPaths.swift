#if os(Linux)
import FileSystemEventsCore

extension InotifyWatch {
    /// How often ``checkRootPaths()`` looks: the bound on how late a root moved away with a
    /// directory above it is reported.
    static var rootPathCheckIntervalNanoseconds: UInt64 { 1_000_000_000 }

    /// Removes (`rootRemoved`) each root whose path no longer leads to what is watched: for a
    /// directory, the directory itself; for a file, the directory its name is in.
    ///
    /// A watch hears of its own directory's rename (`IN_MOVE_SELF`), never of a rename of a
    /// directory above it: after `mv p q`, the watch of `p/root` goes on hearing `q/root`, and
    /// its changes would be reported at paths under `p/root` that name nothing (or name
    /// another directory made there since). No event says so, so the paths are looked at,
    /// one `statx` per root a second, as `tail -F` looks at its path. A path that cannot be
    /// examined for another reason (permissions changed above it, a stalled network mount)
    /// tells nothing, and the root stays.
    mutating func checkRootPaths() {
        for index in roots.indices where !roots[index].isRemoved {
            let expected: FileIdentity
            let path: [UInt8]
            switch roots[index].kind {
            case .directory(let tree):
                guard tree.inode != 0 else { continue }
                expected = FileIdentity(device: tree.device, inode: tree.inode)
                path = roots[index].bytes
            case .file(let file):
                guard let parent = file.parentIdentity else { continue }
                expected = parent
                path = roots[index].path.removingLastComponent().bytes
            }
            switch Syscalls.status(atPath: path, followSymlinks: true) {
            case .success(let status) where status.identity == expected:
                continue
            case .success, .failure(.noSuchFileOrDirectory), .failure(.notDirectory):
                removeRoot(index)
            case .failure:
                continue
            }
        }
    }
}
#endif
