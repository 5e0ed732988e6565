extension DirectoryListing {
    /// What a listing shows and in which order.
    public struct Options: Sendable, Hashable {
        /// How the entries are ordered; by name, ascending, by default.
        public var sortOrder: SortOrder
        /// Include entries whose name starts with a dot (and, recursively, what is below them).
        public var includesHidden: Bool
        /// List the whole subtree, entries named by their path relative to the directory, or
        /// only the directory's own entries (the default).
        ///
        /// A one-level listing still watches its subdirectories' own entries (not below them),
        /// so that a subdirectory's size and modification time follow what is made or removed
        /// in it.
        public var isRecursive: Bool
        /// How long the source gathers changes before the listing delivers them as one update.
        public var latency: Duration

        /// The defaults list the directory's own entries, without hidden ones, by name, with no
        /// latency window.
        public init(
            sortOrder: SortOrder = .name,
            includesHidden: Bool = false,
            isRecursive: Bool = false,
            latency: Duration = .zero
        ) {
            self.sortOrder = sortOrder
            self.includesHidden = includesHidden
            self.isRecursive = isRecursive
            self.latency = latency
        }
    }
}
