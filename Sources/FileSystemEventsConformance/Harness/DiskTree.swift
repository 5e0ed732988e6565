import PlatformLibc
import CFileSystemEventsShims
public import FileSystemEventsCore

/// What is on disk, read independently of any backend (plain `readdir`/`fstatat` by path), so a
/// bug in the library's own scanner cannot hide a bug in a backend.
///
/// The root itself is an item too (at ``RelativePath/root``), when it exists: a watched file
/// is compared by content like any other, and a root that is gone leaves an empty tree.
public struct DiskTree: Sendable, Equatable {
    /// One item on disk: its type, identity and, for a regular file, the hash of its content.
    public struct Item: Sendable, Equatable {
        /// From `lstat`, so a symlink is itself, except that with `followsFileLinks` a symlink to a
        /// file is a file.
        public var type: FileItemType
        /// FNV-1a of a regular file's content; `nil` for everything else.
        public var contentHash: UInt64?
        /// Device and inode, from `lstat`.
        public var identity: FileIdentity?
    }

    /// Every item read, by root-relative path, the root itself at ``RelativePath/root``; empty
    /// when the root does not exist.
    public var items: [RelativePath: Item]

    /// Reads the tree at `root` (followed if it is a symlink, as a watch follows the root the
    /// user named); with `recursive` false, only the root's children.
    ///
    /// With `followsFileLinks`, a symlink to a file is that file, as a watch that follows
    /// symlinks reports it (under the link's own identity).
    package static func read(root: [UInt8], recursive: Bool, followsFileLinks: Bool = false, admits: (RelativePath, Bool) -> Bool) -> DiskTree {
        var items: [RelativePath: Item] = [:]
        var rootInfo = stat()
        guard AnyDepth.call(root, { fstatat($0, $1, &rootInfo, 0) }) == 0 else { return DiskTree(items: [:]) }
        let rootType = FileItemType(mode: UInt32(rootInfo.st_mode))
        items[.root] = Item(
            type: rootType,
            contentHash: rootType == .file ? ContentObservation.read(root)?.hash : nil,
            identity: FileIdentity(device: UInt64(rootInfo.st_dev), inode: UInt64(rootInfo.st_ino))
        )
        guard rootType == .directory else { return DiskTree(items: items) }
        // A list of directories to read rather than a call per level, on whatever stack the
        // test runs. Down to PATH_MAX below the root, however long the root's own path
        // (scenario 121): the items are keyed by whole relative paths, so a chain read to its
        // bottom costs the square of its depth (scenario 118's 12,000 levels: 144 MB of paths,
        // read at every watch's start). Deeper items are checked through their events.
        var pending: [([UInt8], RelativePath)] = [(root, .root)]
        while let (absolute, relative) = pending.popLast() {
            for name in names(in: absolute) {
                let childAbsolute = absolute + [UInt8(ascii: "/")] + name
                let childRelative = relative / RelativePath(bytes: name)
                var info = stat()
                guard AnyDepth.call(childAbsolute, { fstatat($0, $1, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else { continue }
                var type = FileItemType(mode: UInt32(info.st_mode))
                var target = stat()
                if followsFileLinks && type == .symlink, AnyDepth.call(childAbsolute, { fstatat($0, $1, &target, 0) }) == 0,
                   FileItemType(mode: UInt32(target.st_mode)) == .file
                {
                    type = .file
                }
                guard admits(childRelative, type == .directory) else { continue }
                let hash = type == .file ? ContentObservation.read(childAbsolute)?.hash : nil
                items[childRelative] = Item(
                    type: type, contentHash: hash,
                    identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
                )
                if type == .directory && recursive && childRelative.bytes.count < Int(PATH_MAX) {
                    pending.append((childAbsolute, childRelative))
                }
            }
        }
        return DiskTree(items: items)
    }

    static func names(in directory: [UInt8]) -> [[UInt8]] {
        let descriptor = AnyDepth.call(directory) { openat($0, $1, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else { return [] }
        guard let stream = fdopendir(descriptor) else {
            close(descriptor)
            return []
        }
        return names(readingAndClosing: stream)
    }

    /// The names in the directory open at `descriptor`, which stays open.
    static func names(inDescriptor descriptor: CInt) -> [[UInt8]] {
        let copy = dup(descriptor)
        guard copy >= 0 else { return [] }
        guard let stream = fdopendir(copy) else {
            close(copy)
            return []
        }
        return names(readingAndClosing: stream)
    }

    private static func names(readingAndClosing stream: OpaquePointer) -> [[UInt8]] {
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { chars in
                    Array(UnsafeRawBufferPointer(start: chars, count: strlen(chars)))
                }
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        return names
    }

    static func readAll(_ fd: CInt) -> [UInt8] {
        var content: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Libc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            content.append(contentsOf: chunk[..<count])
        }
        return content
    }

    /// The hash content is compared by (written in C: see `cfse_content_hash`).
    static func contentHash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { cfse_content_hash($0.baseAddress, $0.count) }
    }
}

