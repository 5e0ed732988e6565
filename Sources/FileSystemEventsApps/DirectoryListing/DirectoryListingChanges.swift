/// The step from one list to the next, in the two shapes apps use.
///
/// - As a `CollectionDifference`: `previous.applying(difference) == entries`, always.
///   Removals carry offsets in the previous list, insertions offsets in the new one. An item
///   that stayed (same device and inode) but changed, by name, metadata or position, is a
///   removal and an insertion associated with each other, as `inferringMoves()` would give.
/// - As table-view batch updates (and the CLI's JSON): delete ``removed`` (offsets in the
///   previous list, from the highest down), insert ``inserted`` (offsets in the new list, from
///   the lowest up), then replace the rows at ``updated`` (offsets in the new list) with their
///   new entries. ``moves`` pairs a removal with an insertion of the same item, so a table can
///   animate a move instead of a delete and an insert. An item whose metadata changed without
///   moving among the others is only in ``updated``.
public struct DirectoryListingChanges: Sendable {
    /// A removal paired with an insertion of the same item.
    public struct Move: Sendable, Hashable {
        /// Offset in the previous list.
        public var from: Int
        /// Offset in the new list.
        public var to: Int

        /// Takes both offsets as given.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// The list after this change.
    public var entries: [DirectoryEntry]
    /// The step as a `CollectionDifference`: applied to the previous list it gives ``entries``.
    public var difference: CollectionDifference<DirectoryEntry>
    /// Offsets in the previous list, ascending; includes the sources of ``moves``.
    public var removed: [Int]
    /// Offsets in the new list, ascending; includes the destinations of ``moves``.
    public var inserted: [Int]
    /// Offsets in the new list, ascending, of items that stayed in place but changed (size,
    /// modification time, or a rename that did not change the item's position).
    public var updated: [Int]
    /// Removals paired with insertions of the same item, so a table can animate a move.
    public var moves: [Move]
    /// Set on the last update of a listing whose directory went away (its list is empty).
    public var endReason: DirectoryListing.EndReason?

    /// Takes each field as given; the offsets are not checked against `difference`.
    public init(
        entries: [DirectoryEntry],
        difference: CollectionDifference<DirectoryEntry>,
        removed: [Int],
        inserted: [Int],
        updated: [Int],
        moves: [Move],
        endReason: DirectoryListing.EndReason? = nil
    ) {
        self.entries = entries
        self.difference = difference
        self.removed = removed
        self.inserted = inserted
        self.updated = updated
        self.moves = moves
        self.endReason = endReason
    }

    /// True when nothing changed (the first update after a resume can be empty).
    public var isEmpty: Bool { difference.isEmpty }
}
