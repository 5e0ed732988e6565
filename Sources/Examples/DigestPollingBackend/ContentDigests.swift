import FileSystemEvents
import SystemPackage

/// The digests of the small regular files of one root, keyed by identity: a rename or a move
/// keeps a file's identity, so its digest follows it without any bookkeeping of paths.
struct ContentDigests {
    let limit: Int
    private var digests: [FileIdentity: UInt64] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    /// Records the digests of `snapshot`'s files, returning `modified` for every file whose
    /// content changed since the last call while its status did not (`reported` holds the
    /// paths the status diff already reported as created or modified, which need no second
    /// event). Files that vanished are forgotten.
    mutating func update(from snapshot: FileTreeSnapshot, reported: Set<FilePath>) -> [FileSystemEvent] {
        guard limit > 0 else { return [] }
        var seen: [FileIdentity: UInt64] = [:]
        var events: [FileSystemEvent] = []
        let items = snapshot.rootItem.itemType == .directory ? snapshot.items : [snapshot.rootItem]
        for item in items where item.itemType == .file {
            guard let identity = item.identity, let size = item.size, size <= Int64(limit),
                  let digest = Self.digest(of: item.path, limit: limit)
            else { continue }
            seen[identity] = digest
            if let previous = digests[identity], previous != digest, !reported.contains(item.path) {
                events.append(FileSystemEvent(kind: .modified, path: item.path, itemType: .file, isSynthetic: true, identity: identity))
            }
        }
        digests = seen
        return events
    }

    /// 64-bit FNV-1a of the file's first `limit` bytes; `nil` if it cannot be read (gone,
    /// unreadable, or not a regular file any more): it is then compared by status alone.
    static func digest(of path: FilePath, limit: Int) -> UInt64? {
        guard let descriptor = try? FileDescriptor.open(path, .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking]) else {
            return nil
        }
        defer { try? descriptor.close() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var remaining = limit
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        while remaining > 0 {
            guard let count = try? descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, remaining)])) else {
                return nil
            }
            if count == 0 { break }
            for byte in buffer[..<count] {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
            remaining -= count
        }
        return hash
    }
}
