public import SystemPackage

extension DirectoryListing {
    /// Why a listing ended on its own (rather than being stopped by its consumer).
    public enum EndReason: Sendable, Hashable, CustomStringConvertible {
        /// The directory was deleted, or renamed or moved so that its path no longer names it.
        /// (The kernel reports both alike; holding the directory open to tell them apart would
        /// keep it from reporting a deletion at all.)
        case directoryRemoved(FilePath)

        /// A stable one-word code, as the CLI's JSON spells it.
        public var code: String {
            switch self {
            case .directoryRemoved: return "removed"
            }
        }

        /// A sentence for a person: which directory went away.
        public var description: String {
            switch self {
            case .directoryRemoved(let path): return "directory \(path) was removed or moved away"
            }
        }
    }
}
