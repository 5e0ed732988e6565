#if os(Linux)
/// The paths of files that share an inode inside the watched tree.
///
/// inotify reports a write once, under the name it was opened by; every other hard link to
/// the same inode changed too. Only inodes with more than one known path are kept, so the
/// index costs nothing in a tree without hard links.
struct HardLinkIndex {
    private var paths: [UInt64: [(directory: WatchedDirectory, name: [UInt8])]] = [:]

    mutating func register(inode: UInt64, paths newPaths: [(WatchedDirectory, [UInt8])]) {
        var known = paths[inode] ?? []
        for (directory, name) in newPaths where !known.contains(where: { $0.directory === directory && $0.name == name }) {
            known.append((directory, name))
        }
        if known.count > 1 { paths[inode] = known }
    }

    /// A new link to `inode` appeared at `directory/name`; find its other paths in the trees.
    mutating func add(_ directory: WatchedDirectory, _ name: [UInt8], inode: UInt64, searchingFrom trees: [WatchedDirectory]) {
        if paths[inode] != nil {
            register(inode: inode, paths: [(directory, name)])
            return
        }
        var found: [(WatchedDirectory, [UInt8])] = [(directory, name)]
        for tree in trees {
            tree.forEachDirectory { node in
                for (childName, entry) in node.children where entry.inode == inode && entry.type == .file {
                    if !(node === directory && childName == name) { found.append((node, childName)) }
                }
            }
        }
        register(inode: inode, paths: found)
    }

    mutating func remove(_ directory: WatchedDirectory, _ name: [UInt8], inode: UInt64) {
        guard var known = paths[inode] else { return }
        known.removeAll { $0.directory === directory && $0.name == name }
        paths[inode] = known.count > 1 ? known : nil
    }

    mutating func move(inode: UInt64, from source: WatchedDirectory, _ sourceName: [UInt8], to destination: WatchedDirectory, _ destinationName: [UInt8]) {
        guard var known = paths[inode] else { return }
        if let index = known.firstIndex(where: { $0.directory === source && $0.name == sourceName }) {
            known[index] = (destination, destinationName)
            paths[inode] = known
        }
    }

    mutating func removeAll() {
        paths.removeAll()
    }

    /// Every live path of `inode`, or just the one given when it has no other links.
    func paths(of inode: UInt64, at directory: WatchedDirectory, _ name: [UInt8]) -> [(WatchedDirectory, [UInt8])] {
        guard let known = paths[inode] else { return [(directory, name)] }
        let live = known.filter { $0.directory.children[$0.name]?.inode == inode && $0.directory.isAttached }
        return live.isEmpty ? [(directory, name)] : live.map { ($0.directory, $0.name) }
    }
}

extension WatchedDirectory {
    /// Whether this node is still part of its root's tree.
    var isAttached: Bool {
        var node = self
        while let parent = node.parent {
            guard parent.children[node.name]?.directory === node else { return false }
            node = parent
        }
        return true
    }
}
#endif
