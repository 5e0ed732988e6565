/// The identity of an item on disk: the device it lives on and its inode number.
///
/// Paths change when things are renamed; identity does not. Higher-level features (following a
/// log file across rotation, reconciling what changed while an app was not running) key on it.
/// Inode numbers are reused as soon as a file is deleted, so identity alone never proves two
/// observations are the same file: the snapshot diff adds birth time and type before it pairs a move.
public struct FileIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `st_dev`: the file system the item lives on.
    public var device: UInt64
    /// `st_ino`: unique on its device while the item exists, and reused once it is deleted.
    public var inode: UInt64

    /// Takes both numbers as given; nothing is checked against the disk.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// `device:inode`, both in decimal.
    public var description: String { "\(device):\(inode)" }
}
