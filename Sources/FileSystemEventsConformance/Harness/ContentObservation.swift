import PlatformLibc
public import FileSystemEventsCore

/// What a consumer read of a file when an event told it to: the content's hash, and which
/// file (device, inode) it actually opened.
///
/// The harness consumes like a real consumer does: on `created` or `modified` of a file it
/// re-reads the file, at the moment it receives the event. Whatever happens to the file after
/// that read must be announced by a later event, so at the end the replay knows, for *every*
/// file and not only those present at `ready`, the content the consumer last read, and a
/// rewrite nobody announced (a `cp -p` that keeps size and mtime) shows up as a difference.
///
/// The read is by path, so by the time a late event is consumed the path may hold another
/// file. The identity says which file was read: when the event names a different one, the
/// read proves nothing and the content is left unknown.
public struct ContentObservation: Sendable, Hashable {
    /// A hash of the bytes read, the same as ``DiskTree/Item/contentHash``, so the two compare.
    public var hash: UInt64
    /// The device and inode of the file actually opened, which may not be the one the event named.
    public var identity: FileIdentity

    /// Takes both fields as given.
    public init(hash: UInt64, identity: FileIdentity) {
        self.hash = hash
        self.identity = identity
    }

    /// Reads the regular file at `path` (never following a symlink, never blocking on a FIFO);
    /// `nil` if there is none or it cannot be read.
    package static func read(_ path: [UInt8]) -> ContentObservation? {
        let fd = AnyDepth.call(path) { openat($0, $1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return ContentObservation(
            hash: DiskTree.contentHash(DiskTree.readAll(fd)),
            identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        )
    }

    /// What the consumer reads for `event`: `created` and `modified` make it read, and so does
    /// `settled` (an importer opens a file when it is settled, and what it reads then must be
    /// the final content).
    static func forEvent(_ event: FileSystemEvent) -> ContentObservation? {
        guard event.kind == .created || event.kind == .modified || event.kind == .settled,
            event.itemType == .file || event.itemType == .unknown
        else { return nil }
        return read(event.path.bytes)
    }
}
