/// What a ``DirectoryListing`` delivers: first the whole sorted list, then what changed.
public enum DirectoryListingUpdate: Sendable {
    /// The whole sorted list: the first update of a listing started from nothing.
    case listing([DirectoryEntry])
    /// The list after a change, and how to get there from the previous update's list. The first
    /// update of a listing resumed from an earlier list (``DirectoryListing/resuming(from:)``) is
    /// a `changes` update too. The last update of a listing whose directory went away has an
    /// ``DirectoryListingChanges/endReason`` and an empty list.
    case changes(DirectoryListingChanges)

    /// The list as of this update.
    public var entries: [DirectoryEntry] {
        switch self {
        case .listing(let entries): return entries
        case .changes(let changes): return changes.entries
        }
    }
}
