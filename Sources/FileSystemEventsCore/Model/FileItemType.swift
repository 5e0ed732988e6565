/// What kind of item an event is about.
///
/// `unknown` exists because some facts arrive without a type: an item that vanished before it
/// could be examined, or a kernel event that does not say.
public enum FileItemType: String, Sendable, Hashable, CaseIterable, Codable {
    case file
    case directory
    case symlink
    case other
    case unknown
}
