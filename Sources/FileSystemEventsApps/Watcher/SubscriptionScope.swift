import FileSystemEventsCore
import SystemPackage

/// What one subscriber sees of a shared tree: the subtrees it subscribed to (which follow
/// renames, if it asked), narrowed by its filter and recursion, and how each shared event
/// looks from there.
struct SubscriptionScope: Sendable {
    struct Root: Sendable {
        /// Which of the watcher's roots holds it.
        var watcherRoot: Int
        /// Its path relative to that watcher root (empty: the watcher root itself).
        var relative: [UInt8]
        var path: FilePath
        /// A file is watched by name (`removed` and `created` again); a directory ends the
        /// subscription when it goes (`rootRemoved`).
        var isFile: Bool
        var isRemoved = false
    }

    var roots: [Root]
    let filter: PathFilter
    let isRecursive: Bool
    let followsRenames: Bool
    /// Whether `modified` for a directory (its entries changed) reaches this subscriber
    /// (``WatchOptions/reportsDirectoryContentChanges``); the shared source always reports it.
    var reportsDirectoryContentChanges = false

    /// The subscribed root that holds `relative` (in watcher root `watcherRoot`), and the path
    /// inside it.
    func locate(_ relative: [UInt8], in watcherRoot: Int) -> (root: Int, inner: [UInt8])? {
        for (index, root) in roots.enumerated() where root.watcherRoot == watcherRoot && !root.isRemoved {
            if root.relative.isEmpty { return (index, relative) }
            if relative == root.relative { return (index, []) }
            if relative.isBelow(root.relative) {
                return (index, Array(relative[(root.relative.count + 1)...]))
            }
        }
        return nil
    }

    /// Whether the item at `inner` (below a subscribed root) is reported: recursion, then the
    /// filter on every directory on the way (an excluded directory hides its subtree).
    func admits(inner: [UInt8], isDirectory: Bool) -> Bool {
        if inner.isEmpty { return true }
        var start = inner.startIndex
        while let slash = inner[start...].firstIndex(of: UInt8(ascii: "/")) {
            if !isRecursive { return false }
            if !filter.isEmpty && !filter.admits(relativePath: inner[..<slash], name: inner[start..<slash], isDirectory: true) {
                return false
            }
            start = slash + 1
        }
        return filter.isEmpty || filter.admits(relativePath: inner, name: inner[start...], isDirectory: isDirectory)
    }

    /// Whether some live root reports the item at `relative`: roots of one subscription may
    /// nest, and each applies the filter from where it stands.
    func isVisible(_ relative: [UInt8]?, in watcherRoot: Int, isDirectory: Bool) -> Bool {
        guard let relative else { return false }
        for root in roots where root.watcherRoot == watcherRoot && !root.isRemoved {
            if root.relative.isEmpty {
                if admits(inner: relative, isDirectory: isDirectory) { return true }
            } else if relative == root.relative {
                return true
            } else if relative.isBelow(root.relative),
                      admits(inner: Array(relative[(root.relative.count + 1)...]), isDirectory: isDirectory) {
                return true
            }
        }
        return false
    }

    /// A copy of the subtree of root `index` as this subscriber sees it (filtered).
    func view(of tree: LiveTree, root index: Int) -> RootSnapshot? {
        guard var copy = tree.copy(of: roots[index].relative) else { return nil }
        if let directory = copy.tree, !isRecursive || !filter.isEmpty {
            prune(directory, inner: [])
        }
        if roots[index].isFile { copy.tree = nil }
        return copy
    }

    private func prune(_ directory: SnapshotDirectory, inner: [UInt8]) {
        directory.entries.removeAll { entry in
            !admits(inner: inner.appendingComponent(entry.name), isDirectory: entry.itemType == .directory)
        }
        for entry in directory.entries {
            if let child = entry.directory { prune(child, inner: inner.appendingComponent(entry.name)) }
        }
    }
}
