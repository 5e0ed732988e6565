import FileSystemEventsCore

extension DirectoryListing {
    /// How a listing is ordered: by name, modification time or size, ascending or descending.
    ///
    /// The order is total and deterministic: entries with the same time or size are ordered by
    /// name, and names compare by their bytes (`memcmp`), never by locale, so every run and
    /// every machine agrees. Descending is exactly the reverse of ascending (as `ls -r` is),
    /// ties included.
    public struct SortOrder: Sendable, Hashable, CustomStringConvertible {
        /// What entries are compared by first; ties are ordered by name.
        public enum Key: String, Sendable, Hashable, CaseIterable {
            /// The name's bytes (`memcmp` order).
            case name
            /// The modification time, to the nanosecond.
            case modificationTime
            /// The size in bytes.
            case size
        }

        /// What entries are compared by first.
        public var key: Key
        /// Reverses the whole order, ties included.
        public var isDescending: Bool

        /// Ascending unless `descending` is set.
        public init(_ key: Key = .name, descending: Bool = false) {
            self.key = key
            self.isDescending = descending
        }

        /// By name, ascending: the default.
        public static let name = SortOrder(.name)
        /// Oldest first.
        public static let modificationTime = SortOrder(.modificationTime)
        /// Smallest first.
        public static let size = SortOrder(.size)

        /// The key's name, with ` (descending)` when reversed.
        public var description: String { key.rawValue + (isDescending ? " (descending)" : "") }

        /// Negative, zero or positive as `lhs` sorts before, with or after `rhs`.
        @inline(__always)
        package func compare(_ lhs: DirectoryEntry, _ rhs: DirectoryEntry) -> Int {
            var order = 0
            switch key {
            case .name:
                break
            case .modificationTime:
                if lhs.modificationTime != rhs.modificationTime { order = lhs.modificationTime < rhs.modificationTime ? -1 : 1 }
            case .size:
                if lhs.size != rhs.size { order = lhs.size < rhs.size ? -1 : 1 }
            }
            if order == 0 { order = compareBytes(lhs.nameBytes, rhs.nameBytes) }
            return isDescending ? -order : order
        }

        @inline(__always)
        package func areInIncreasingOrder(_ lhs: DirectoryEntry, _ rhs: DirectoryEntry) -> Bool {
            compare(lhs, rhs) < 0
        }
    }
}
