public import FileSystemEventsCore
public import SystemPackage

/// One item of a ``DirectoryListing``: its name (a path relative to the listed directory when
/// the listing is recursive), type, size, modification time and identity.
///
/// Names are kept as bytes, exactly as the kernel returns them, so a name that is not valid
/// UTF-8 survives and sorting is deterministic (`memcmp` order). Two entries are equal when
/// every field is: an entry whose size or modification time changed is a different value,
/// which is what makes `previous.applying(difference) == entries` exact.
///
/// An entry is one reference wide (its fields live in an immutable box), so inserting into
/// or removing from a sorted array of 100,000 entries moves 800 KB, not 6 MB: that is most of
/// what keeps a change in a large directory as cheap as in a small one.
public struct DirectoryEntry: Sendable, Hashable, Identifiable, CustomStringConvertible {
    private final class Fields: Sendable {
        let nameBytes: [UInt8]
        let type: FileItemType
        let size: Int64
        let modificationTime: FileSystemEvent.Timestamp
        let identity: FileIdentity
        let birthTime: Int64

        init(nameBytes: [UInt8], type: FileItemType, size: Int64, modificationTime: FileSystemEvent.Timestamp, identity: FileIdentity, birthTime: Int64) {
            self.nameBytes = nameBytes
            self.type = type
            self.size = size
            self.modificationTime = modificationTime
            self.identity = identity
            self.birthTime = birthTime
        }

        func with(
            nameBytes: [UInt8]? = nil, type: FileItemType? = nil, size: Int64? = nil,
            modificationTime: FileSystemEvent.Timestamp? = nil, identity: FileIdentity? = nil
        ) -> Fields {
            Fields(
                nameBytes: nameBytes ?? self.nameBytes, type: type ?? self.type, size: size ?? self.size,
                modificationTime: modificationTime ?? self.modificationTime, identity: identity ?? self.identity,
                birthTime: birthTime)
        }
    }

    private var fields: Fields

    /// An entry with these fields. Its birth time, which a listing reads itself to pair the
    /// removal and insertion of a renamed item, is left unknown.
    public init(
        nameBytes: [UInt8],
        type: FileItemType,
        size: Int64,
        modificationTime: FileSystemEvent.Timestamp,
        identity: FileIdentity
    ) {
        fields = Fields(nameBytes: nameBytes, type: type, size: size, modificationTime: modificationTime, identity: identity, birthTime: 0)
    }

    /// The name, or the `/`-separated path relative to the listed directory, as raw bytes.
    public var nameBytes: [UInt8] {
        get { fields.nameBytes }
        set { fields = fields.with(nameBytes: newValue) }
    }

    /// What the item is; a listing never follows a symlink, so a link is listed as
    /// ``FileItemType/symlink``.
    public var type: FileItemType {
        get { fields.type }
        set { fields = fields.with(type: newValue) }
    }

    /// Bytes, as `stat` reports them (`st_size`); for a symlink, the length of its target.
    public var size: Int64 {
        get { fields.size }
        set { fields = fields.with(size: newValue) }
    }

    /// The modification time (`st_mtime`), to the nanosecond.
    public var modificationTime: FileSystemEvent.Timestamp {
        get { fields.modificationTime }
        set { fields = fields.with(modificationTime: newValue) }
    }

    /// Device and inode: what stays the same when the item is renamed (a move in a listing).
    public var identity: FileIdentity {
        get { fields.identity }
        set { fields = fields.with(identity: newValue) }
    }

    /// Birth time in nanoseconds since the epoch, 0 where the file system does not record it:
    /// inode numbers are reused as soon as a file is deleted, so a move is paired on identity
    /// *and* birth time.
    package var birthTime: Int64 { fields.birthTime }

    /// The name for display: the bytes decoded as UTF-8, with U+FFFD for bytes that are not.
    public var name: String { String(decoding: nameBytes, as: UTF8.self) }

    /// The name as a relative path (join it to the listed directory for the item's path).
    public var relativePath: FilePath { FilePath(bytes: nameBytes) }

    /// Names are unique within a listing, so they identify rows (SwiftUI's `List`, a diffable
    /// data source). Use ``identity`` to follow an item across renames.
    public var id: [UInt8] { nameBytes }

    /// Type, name, size and modification time, for logs.
    public var description: String {
        "\(type.rawValue) \(name) (\(size) bytes, modified \(modificationTime.secondsSinceEpoch).\(modificationTime.nanoseconds))"
    }

    /// Equal when every field is, the birth time included.
    public static func == (lhs: DirectoryEntry, rhs: DirectoryEntry) -> Bool {
        if lhs.fields === rhs.fields { return true }
        let l = lhs.fields
        let r = rhs.fields
        return l.size == r.size && l.modificationTime == r.modificationTime && l.identity == r.identity
            && l.type == r.type && l.birthTime == r.birthTime && l.nameBytes == r.nameBytes
    }

    /// Hashes the name, size, modification time and identity, a subset of what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields.nameBytes)
        hasher.combine(fields.size)
        hasher.combine(fields.modificationTime)
        hasher.combine(fields.identity)
    }

    /// Whether the name, or any component of a recursive listing's path, starts with a dot.
    package var isHidden: Bool { Self.isHidden(nameBytes) }

    package static func isHidden(_ path: [UInt8]) -> Bool {
        var atComponentStart = true
        for byte in path {
            if atComponentStart && byte == UInt8(ascii: ".") { return true }
            atComponentStart = byte == UInt8(ascii: "/")
        }
        return false
    }

    /// The entry for a `stat` result.
    package init(nameBytes: [UInt8], status: FileStatus) {
        let nanoseconds = status.modificationTime
        var seconds = nanoseconds / 1_000_000_000
        var remainder = nanoseconds % 1_000_000_000
        if remainder < 0 {
            seconds -= 1
            remainder += 1_000_000_000
        }
        fields = Fields(
            nameBytes: nameBytes,
            type: status.itemType,
            size: status.size,
            modificationTime: FileSystemEvent.Timestamp(secondsSinceEpoch: seconds, nanoseconds: Int32(remainder)),
            identity: status.identity,
            birthTime: status.birthTime
        )
    }

    /// What pairs a removal with an insertion of the same item across a rename.
    package struct Item: Hashable {
        var identity: FileIdentity
        var birthTime: Int64
        var type: FileItemType
    }

    package var item: Item { Item(identity: identity, birthTime: birthTime, type: type) }
}
