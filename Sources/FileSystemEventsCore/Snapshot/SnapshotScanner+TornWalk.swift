import SystemPackage

// A walk torn by a directory's move, walked again twice and torn each time (a burst of
// exchanges faster than the walk), used to be kept as it was: one directory at two places,
// or inside itself, and another directory nowhere. Diffed, that told consumers of states no
// disk ever held: one inode `created` at two paths, then `removed` from a path that names a
// directory inside itself (`d1922/d1941/…/d1922/d1941`), repaired only by the next scan.
// The final tree came out right; every state on the way there did not.

extension SnapshotScanner {
    /// Where one directory was listed: the directory holding the entry, the entry's name, and
    /// its path from the root.
    private struct Placement {
        let parent: SnapshotDirectory
        let name: SnapshotName
        let relativePath: [UInt8]
    }

    /// Gives every directory of a torn walk's `tree` one place: where the walk listed one
    /// directory at several places, each of them that the previous scan did not hold it at
    /// takes back what the previous scan found there (or, where it found nothing, is left out),
    /// as a directory that cannot be listed keeps its previous contents. What was taken back
    /// may be listed elsewhere in turn, so this repeats until no directory is held twice. The
    /// next scan sees the truth; until then the snapshot holds, at those places, a state that
    /// was on disk.
    ///
    /// A directory mounted twice (a bind mount inside the tree) is at two places on disk, and
    /// stays at both: it is told from a torn walk by the two places' mount IDs, which differ.
    ///
    /// - Parameter previous: the previous scan's tree of the same root, which is left as it
    ///   was; `nil` on a first scan, whose directories held twice are left out.
    static func repairDirectoriesListedTwice(in tree: SnapshotDirectory, root: FilePath, previous: SnapshotDirectory?) {
        let paths = PathBuilder(root: root)
        var mountedTwice: Set<FileIdentity> = []
        // Each round gives at least one place back what the previous scan held there, and no
        // round takes that away again, so rounds are few; the bound only guards that argument.
        for _ in 0..<1_000 {
            var repaired = false
            for (identity, placements) in directoriesListedTwice(in: tree) where !mountedTwice.contains(identity) {
                if isMountedTwice(identity, at: placements.map { paths.bytes($0.relativePath) }) {
                    mountedTwice.insert(identity)
                    continue
                }
                for placement in placements {
                    let before = previous?.entry(atRelativePath: placement.relativePath)
                    if let before, before.itemType == .directory, before.status.identity == identity { continue }
                    if let before {
                        placement.parent.insert(
                            SnapshotEntry(name: placement.name, status: before.status,
                                          directory: before.directory?.deepCopy(parent: placement.parent)))
                        // The previous tree's subtree may have been shared with the one just
                        // dropped (``scan(root:sharingWith:abandoning:)``), whose directories
                        // its own children now point up to.
                        before.directory?.reattachSubtrees()
                    } else {
                        placement.parent.remove(named: placement.name)
                    }
                    repaired = true
                }
            }
            if !repaired { return }
        }
    }

    /// Directory identities found at more than one place in `tree`, with those places.
    private static func directoriesListedTwice(in tree: SnapshotDirectory) -> [FileIdentity: [Placement]] {
        var placements: [FileIdentity: [Placement]] = [:]
        var pending: [(SnapshotDirectory, [UInt8])] = [(tree, [])]
        while let (directory, path) = pending.popLast() {
            for entry in directory.entries where !entry.isVacant && entry.itemType == .directory {
                let childPath = path.appendingComponent(entry.name)
                placements[entry.status.identity, default: []].append(Placement(parent: directory, name: entry.name, relativePath: childPath))
                if let child = entry.directory { pending.append((child, childPath)) }
            }
        }
        return placements.filter { $0.value.count > 1 }
    }

    /// Whether at least two of `paths` show the directory `identity` now, through different
    /// mounts. Where the kernel cannot tell mounts apart, two paths that show it are taken as
    /// mounted twice, as every walk took them before.
    private static func isMountedTwice(_ identity: FileIdentity, at paths: [[UInt8]]) -> Bool {
        var mounts: Set<UInt64?> = []
        var showing = 0
        for path in paths {
            guard case .success(let found) = Syscalls.mountedIdentity(atPath: path), found.identity == identity else { continue }
            mounts.insert(found.mountID)
            showing += 1
        }
        return showing > 1 && (mounts.count > 1 || mounts == [nil])
    }
}
