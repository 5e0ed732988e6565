public import SystemPackage

extension FileTreeSnapshot {
    /// One item of a snapshot, as an app shows it or looks it up.
    public struct Item: Sendable, Hashable, CustomStringConvertible {
        /// Absolute, built from the snapshot's root as given.
        public var path: FilePath
        /// What the item was when the snapshot was taken.
        public var itemType: FileItemType
        /// Device and inode, when known.
        public var identity: FileIdentity?
        /// `nil` when the snapshot records structure only (see ``FileTreeSnapshot/recordsAttributes``).
        public var size: Int64?
        /// `nil` when the snapshot records structure only (see ``FileTreeSnapshot/recordsAttributes``).
        public var modificationTime: FileSystemEvent.Timestamp?

        /// The type and the path, as in `file /srv/inbox/a.txt`.
        public var description: String { "\(itemType.rawValue) \(path)" }
    }

    /// The root itself.
    public var rootItem: Item {
        makeItem(path: root, status: storage.snapshot.status)
    }

    /// Every item below the root, each directory before its contents, names in byte order.
    public var items: [Item] {
        items(reserving: storage.snapshot.entryCount) { _ in true }
    }

    /// The regular files below the root, in the order of ``items``.
    ///
    /// A path is made only for what is returned: an app that reads files (a content digest,
    /// an index) need not pay for a path per directory, which in a tree thousands of levels
    /// deep is most of the work.
    public var regularFiles: [Item] {
        items(reserving: 0) { $0 == .file }
    }

    private func items(reserving count: Int, ofType wanted: (FileItemType) -> Bool) -> [Item] {
        var result: [Item] = []
        guard let tree = storage.snapshot.tree else { return result }
        result.reserveCapacity(count)
        let paths = PathBuilder(root: root)
        func walk(_ directory: SnapshotDirectory, _ relative: [UInt8]) {
            for entry in directory.entries {
                let path = relative.appendingComponent(entry.name)
                if wanted(entry.status.itemType) { result.append(makeItem(path: paths.path(path), status: entry.status)) }
                if let child = entry.directory { walk(child, path) }
            }
        }
        // One call per level of the tree: on a stack made for any depth.
        ProducerThread.withLargeStack { walk(tree, []) }
        return result
    }

    /// The item at `path` (absolute, below the root as given), or `nil`.
    public func item(at path: FilePath) -> Item? {
        guard let relative = PathBuilder(root: root).relative(WatchOptions.absolute(path)) else { return nil }
        if relative.isEmpty { return rootItem }
        guard let entry = storage.snapshot.tree?.entry(atRelativePath: relative) else { return nil }
        return makeItem(path: WatchOptions.absolute(path), status: entry.status)
    }

    /// The items directly inside the directory at `path`, in byte order of their names; `nil`
    /// if there is no directory there (or its contents were not recorded).
    public func contents(of path: FilePath) -> [Item]? {
        let absolute = WatchOptions.absolute(path)
        guard let relative = PathBuilder(root: root).relative(absolute), let directory = directory(at: relative) else { return nil }
        let paths = PathBuilder(root: absolute)
        return directory.entries.map { makeItem(path: paths.path($0.name.bytes), status: $0.status) }
    }

    private func makeItem(path: FilePath, status: FileStatus) -> Item {
        Item(
            path: path,
            itemType: status.itemType,
            identity: status.inode == 0 ? nil : status.identity,
            size: recordsAttributes ? status.size : nil,
            modificationTime: recordsAttributes
                ? FileSystemEvent.Timestamp(secondsSinceEpoch: status.modificationTime / 1_000_000_000,
                                            nanoseconds: Int32(status.modificationTime % 1_000_000_000))
                : nil
        )
    }

    private func directory(at relative: [UInt8]) -> SnapshotDirectory? {
        if relative.isEmpty { return storage.snapshot.tree }
        return storage.snapshot.tree?.entry(atRelativePath: relative)?.directory
    }
}
