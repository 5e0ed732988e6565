public import SystemPackage

extension DirectoryListing {
    /// Why a listing ended on its own (rather than being stopped by its consumer).
    public enum EndReason: Sendable, Hashable, CustomStringConvertible {
        /// The directory was deleted.
        case directoryRemoved(FilePath)
        /// The directory was renamed or moved elsewhere; its path no longer names it.
        case directoryMovedAway(FilePath)

        /// A stable one-word code, as the CLI's JSON spells it.
        public var code: String {
            switch self {
            case .directoryRemoved: return "removed"
            case .directoryMovedAway: return "movedAway"
            }
        }

        public var description: String {
            switch self {
            case .directoryRemoved(let path): return "directory \(path) was removed"
            case .directoryMovedAway(let path): return "directory \(path) was renamed or moved away"
            }
        }
    }
}
