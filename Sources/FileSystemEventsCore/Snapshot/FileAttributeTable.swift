import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The part of a status that a tree repeats from item to item: device, mode, owner, group and
/// link count, and the high 32 bits of the size and of the inode.
///
/// The size's are zero for every file under 4 GiB. The inode's are zero on ext4, whose inode
/// numbers are 32-bit, and on any file system that numbers its inodes from 1 up (tmpfs,
/// btrfs, ZFS) until it has made four billion; XFS, overlayfs and network file systems that
/// put an allocation group, a layer or a generation in the high bits give a few values each.
package struct SharedFileAttributes: Hashable, Sendable {
    package var device: UInt64
    package var mode: UInt32
    package var userID: UInt32
    package var groupID: UInt32
    package var linkCount: UInt32
    package var sizeHighBits: UInt32
    package var inodeHighBits: UInt32

    package init(_ status: FileStatus) {
        device = status.device
        mode = status.mode
        userID = status.userID
        groupID = status.groupID
        linkCount = status.linkCount
        sizeHighBits = UInt32(truncatingIfNeeded: UInt64(bitPattern: status.size) >> 32)
        inodeHighBits = UInt32(truncatingIfNeeded: status.inode >> 32)
    }

    /// The whole size, from the low 32 bits kept elsewhere.
    @inline(__always)
    package func size(withLowBits low: UInt32) -> Int64 {
        Int64(bitPattern: UInt64(sizeHighBits) << 32 | UInt64(low))
    }

    /// The whole inode number, from the low 32 bits kept elsewhere.
    @inline(__always)
    package func inode(withLowBits low: UInt32) -> UInt64 {
        UInt64(inodeHighBits) << 32 | UInt64(low)
    }
}

/// Every ``SharedFileAttributes`` value the process has stored in a snapshot entry, each kept
/// once and named by a 32-bit index.
///
/// A polling snapshot holds one status per item, and a million items held their 24 bytes of
/// device, mode, owner, group and link count a million times over, although a tree has a few
/// dozen such combinations (one per owner, permission and type, and per link count of its
/// directories, and per 4 GiB of size among its largest files). An entry keeps the index
/// instead (``SnapshotEntry``): nothing is lost, every status reads back exactly as it was
/// stored.
///
/// The table only grows: an index, once handed out, names the same value for the life of the
/// process, so entries (and copies of them on any thread) need no lock to read it. Indices are
/// handed out under a lock; a slot is written before its index leaves the lock, and whoever
/// holds the index got it through that lock or through whatever handed the entry over, so the
/// slot is visible to every reader. Slots live in chunks that never move; the table of chunks
/// is reserved zeroed and untouched, so it costs address space, not memory.
package enum FileAttributeTable {
    private static let chunkShift: UInt32 = 12
    private static let chunkSize = 1 << Int(chunkShift)
    /// Enough chunks for every 32-bit index.
    private static let chunkCount = 1 << 20

    /// The chunks, zeroed by `calloc`, whose pages the kernel hands over only when written.
    private nonisolated(unsafe) static let chunks: UnsafeMutablePointer<UnsafeMutablePointer<SharedFileAttributes>?> = {
        let stride = MemoryLayout<UnsafeMutablePointer<SharedFileAttributes>?>.stride
        if let memory = calloc(chunkCount, stride) {
            return memory.bindMemory(to: UnsafeMutablePointer<SharedFileAttributes>?.self, capacity: chunkCount)
        }
        // Where `calloc` will not reserve it, the table is made resident at once (8 MiB).
        let table = UnsafeMutablePointer<UnsafeMutablePointer<SharedFileAttributes>?>.allocate(capacity: chunkCount)
        table.initialize(repeating: nil, count: chunkCount)
        return table
    }()

    private struct State: Sendable {
        var indices: [SharedFileAttributes: UInt32] = [:]
        var count: UInt32 = 0
    }

    private static let state = Mutex(State())

    /// The last index handed out for a directory, and for anything else: a scan stores entry
    /// after entry with the same attributes, and finds them here without the lock.
    private static let lastDirectory = Atomic<UInt32>(.max)
    private static let lastOther = Atomic<UInt32>(.max)

    /// The attributes stored at `index`, which ``index(of:)`` returned.
    @inline(__always)
    package static func attributes(at index: UInt32) -> SharedFileAttributes {
        chunks[Int(index >> chunkShift)].unsafelyUnwrapped[Int(index) & (chunkSize - 1)]
    }

    /// The index that names `attributes`, stored now if it is new.
    package static func index(of attributes: SharedFileAttributes) -> UInt32 {
        let isDirectory = FileItemType(mode: attributes.mode) == .directory
        let recent = isDirectory ? lastDirectory.load(ordering: .acquiring) : lastOther.load(ordering: .acquiring)
        if recent != .max && Self.attributes(at: recent) == attributes { return recent }
        let index = state.withLock { state -> UInt32 in
            if let known = state.indices[attributes] { return known }
            let index = state.count
            let chunk = Int(index >> chunkShift)
            // Four billion distinct values would need a hundred times the memory of any
            // machine first: the last index is reused rather than wrapped around.
            if index == .max { return index - 1 }
            if chunks[chunk] == nil { chunks[chunk] = .allocate(capacity: chunkSize) }
            (chunks[chunk].unsafelyUnwrapped + (Int(index) & (chunkSize - 1))).initialize(to: attributes)
            state.indices[attributes] = index
            state.count = index &+ 1
            return index
        }
        if isDirectory {
            lastDirectory.store(index, ordering: .releasing)
        } else {
            lastOther.store(index, ordering: .releasing)
        }
        return index
    }

    /// How many distinct values are stored (for tests and diagnostics).
    package static var count: Int {
        state.withLock { Int($0.count) }
    }
}
