import CFileSystemEventsShims

/// One `statx` result, reduced to what change detection needs and packed into 64 bytes. A
/// snapshot keeps one per entry, and large trees hold millions: an entry stores the part a
/// tree repeats (device, mode, owner, group, link count, a size's high half) once per process
/// (``FileAttributeTable``), and the rest in itself (``SnapshotEntry``).
///
/// Times are nanoseconds since the epoch: comparing the full nanosecond value is what lets the
/// polling backend see a second write within the same second (fswatch's poll monitor does not).
package struct FileStatus: Sendable, Hashable {
    package var device: UInt64
    package var inode: UInt64
    package var mode: UInt32
    package var userID: UInt32
    package var groupID: UInt32
    package var linkCount: UInt32
    package var size: Int64
    package var modificationTime: Int64
    package var changeTime: Int64
    /// 0 when the file system does not record birth time.
    package var birthTime: Int64

    package init(
        device: UInt64, inode: UInt64, mode: UInt32, userID: UInt32 = 0, groupID: UInt32 = 0,
        linkCount: UInt32 = 1, size: Int64 = 0, modificationTime: Int64 = 0, changeTime: Int64 = 0,
        birthTime: Int64 = 0
    ) {
        self.device = device
        self.inode = inode
        self.mode = mode
        self.userID = userID
        self.groupID = groupID
        self.linkCount = linkCount
        self.size = size
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.birthTime = birthTime
    }

    /// This status (a file's, reached through a symlink) under the link's own device and
    /// inode: following symlinks, a link to a file is that file (its type, size and times, so
    /// a write to it is a change at the link), yet it is its own entry, apart from the target,
    /// which may be in the tree too.
    package func followed(through link: FileStatus) -> FileStatus {
        var followed = self
        followed.device = link.device
        followed.inode = link.inode
        return followed
    }

    init(_ raw: cfse_status) {
        self.device = raw.device
        self.inode = raw.inode
        self.mode = raw.mode
        self.userID = raw.uid
        self.groupID = raw.gid
        self.linkCount = raw.link_count
        self.size = raw.size
        self.modificationTime = Self.nanoseconds(raw.modification_seconds, raw.modification_nanoseconds)
        self.changeTime = Self.nanoseconds(raw.change_seconds, raw.change_nanoseconds)
        self.birthTime = raw.has_birth_time != 0 ? Self.nanoseconds(raw.birth_seconds, raw.birth_nanoseconds) : 0
    }

    /// A time as nanoseconds since the epoch, held at the ends of what 64 bits hold (about
    /// 1677-09-21 and 2262-04-11) rather than wrapped: `touch -d 2300-01-01` was listed as
    /// 1715 and sorted before 2020 (a race hunt, 2026-12-05). Such a time still orders right,
    /// and a change of it is seen by the change time that comes with it.
    package static func nanoseconds(_ seconds: Int64, _ nanoseconds: UInt32) -> Int64 {
        let (scaled, overflowed) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflowed else { return seconds < 0 ? .min : .max }
        let (total, overflowedAgain) = scaled.addingReportingOverflow(Int64(nanoseconds))
        return overflowedAgain ? .max : total
    }

    package var identity: FileIdentity { FileIdentity(device: device, inode: inode) }

    package var itemType: FileItemType { FileItemType(mode: mode) }

    /// Permission and ownership bits, the part of a status a `chmod`/`chown` changes.
    package var permissions: UInt32 { mode & 0o7777 }
}

extension FileItemType {
    /// Decodes `st_mode`'s file-type bits (the values are the same on Linux and Darwin). No
    /// file has type bits 0: they stand for ``unknown`` (``modeBits``).
    package init(mode: UInt32) {
        switch mode & 0o170000 {
        case 0o100000: self = .file
        case 0o040000: self = .directory
        case 0o120000: self = .symlink
        case 0: self = .unknown
        default: self = .other
        }
    }

    /// The type bits of a status made from a type alone (a kernel backend's model, a tree kept
    /// from events), which decode to this type again: an item first told as ``unknown`` and
    /// then found gone is told gone as ``unknown``, not as a FIFO (``other``).
    package var modeBits: UInt32 {
        switch self {
        case .file: return 0o100000
        case .directory: return 0o040000
        case .symlink: return 0o120000
        case .other: return 0o010000
        case .unknown: return 0
        }
    }

    /// Decodes a `d_type` from a directory listing.
    package init(directoryEntryType: UInt8) {
        switch directoryEntryType {
        case 8: self = .file  // DT_REG
        case 4: self = .directory  // DT_DIR
        case 10: self = .symlink  // DT_LNK
        case 0: self = .unknown  // DT_UNKNOWN
        default: self = .other
        }
    }
}
