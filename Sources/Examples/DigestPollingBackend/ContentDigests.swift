import FileSystemEvents
import SystemPackage

/// The digests of the small regular files of one root, keyed by identity: a rename or a move
/// keeps a file's identity, so its digest follows it without any bookkeeping of paths.
struct ContentDigests {
    let limit: Int
    private var digests: [FileIdentity: UInt64] = [:]
    /// The files of at most ``limit`` bytes that the last call found: a scan whose diff
    /// reported nothing left every path, identity and size as it was, so the next call reads
    /// these again without walking the snapshot (which builds a `FilePath` per item).
    private var files: [(identity: FileIdentity, path: FilePath)] = []

    init(limit: Int) {
        self.limit = limit
    }

    /// Records the digests of `snapshot`'s files, returning `modified` for every file whose
    /// content changed since the last call while its status did not (`reported` holds the
    /// paths the status diff already reported as created or modified, which need no second
    /// event; `unchanged` says the scan's diff reported nothing at all). Files that vanished
    /// are forgotten.
    mutating func update(from snapshot: FileTreeSnapshot, reported: Set<FilePath>, unchanged: Bool = false) -> [FileSystemEvent] {
        guard limit > 0 else { return [] }
        if !unchanged {
            let items = snapshot.rootItem.itemType == .directory ? snapshot.regularFiles : [snapshot.rootItem]
            files = items.compactMap { item in
                guard item.itemType == .file, let identity = item.identity, let size = item.size, size <= Int64(limit) else { return nil }
                return (identity, item.path)
            }
        }
        var seen: [FileIdentity: UInt64] = [:]
        var events: [FileSystemEvent] = []
        for (identity, path) in files {
            guard let digest = Self.digest(of: path, limit: limit) else { continue }
            seen[identity] = digest
            if let previous = digests[identity], previous != digest, !reported.contains(path) {
                events.append(FileSystemEvent(kind: .modified, path: path, itemType: .file, isSynthetic: true, identity: identity))
            }
        }
        digests = seen
        return events
    }

    /// A 64-bit FNV-1a of the file's first `limit` bytes, taken eight bytes at a time (a
    /// little-endian word, then the bytes left over); `nil` if it cannot be read (gone,
    /// unreadable, or not a regular file any more): it is then compared by status alone.
    ///
    /// By words because every interval reads every small file again: byte by byte, a debug
    /// build spent 20 s of one conformance scenario (1,000 files of up to 40 KB extracted by
    /// `tar`) hashing. The digest is only ever compared within one run, so the order of
    /// the mixing is free to choose.
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
            hash = Self.mix(hash, UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            remaining -= count
        }
        return hash
    }

    private static let prime: UInt64 = 0x100_0000_01b3

    /// Folds `bytes` into `hash`: whole words first, then the tail byte by byte.
    private static func mix(_ hash: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = hash
        let words = bytes.count / 8
        var offset = 0
        while offset < words * 8 {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            hash = (hash ^ word) &* prime
            offset += 8
        }
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* prime
            offset += 1
        }
        return hash
    }
}
