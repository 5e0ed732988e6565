/// What kind of item an event is about.
///
/// `unknown` exists because some facts arrive without a type: an item that vanished before it
/// could be examined, or a kernel event that does not say.
public enum FileItemType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A regular file (`S_IFREG`).
    case file
    /// A directory (`S_IFDIR`).
    case directory
    /// A symbolic link itself (`S_IFLNK`), not what it points to.
    case symlink
    /// Anything else whose type is known: a FIFO, a socket, a device node.
    case other
    /// Not known: the item vanished before it could be examined, or the report did not say (a
    /// directory entry of type `DT_UNKNOWN`).
    case unknown
}
