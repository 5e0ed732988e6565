#if os(Linux)
import FileSystemEventsCore
import SystemPackage

extension InotifyWatch {
    /// Rebuilds the model from disk and reports the difference as synthetic events, after
    /// `IN_Q_OVERFLOW` (or an unmount under the tree), so the replay invariant survives lost
    /// kernel events.
    ///
    /// Structure comes from diffing the old model against a fresh crawl (watch, then list, as
    /// always). Content cannot be diffed, since the model keeps no contents, so every file whose
    /// ctime is at or after the moment the queue was last known empty (less a margin for
    /// coarse file timestamps) is reported `modified` (mtime moved too) or `attributesChanged`.
    /// A few of those may be repeats; none can be missing.
    mutating func reconcile(afterOverflow: Bool) {
        let since = drainedAt - 20_000_000
        for index in roots.indices {
            guard let oldTree = roots[index].tree else { continue }
            let rootPath = roots[index].path
            if afterOverflow {
                produced.append(FileSystemEvent(kind: .overflow, path: rootPath, itemType: .directory, isSynthetic: false))
                diagnose(.rescannedAfterOverflow, roots[index].bytes, errno: nil,
                         "the kernel event queue overflowed (fs.inotify.max_queued_events); rescanned \(rootPath) to reconcile")
            }
            var previousWatches: [CInt] = []
            oldTree.forEachDirectory { node in
                guard node.watch >= 0 else { return }
                previousWatches.append(node.watch)
                targets[node.watch]?.directories.removeAll { $0 === node }
            }
            let newTree = WatchedDirectory(parent: nil, name: [], root: index)
            roots[index].kind = .directory(newTree)
            var state = CrawlState()
            state.changedSince = since
            crawl(newTree, emitting: false, state: &state)
            if let failure = state.failure { pendingFailure = failure }

            let device = roots[index].device
            let events = SnapshotDiff.events(
                from: oldTree.snapshot(device: device),
                to: newTree.snapshot(device: device),
                root: roots[index].paths
            )
            produced.append(contentsOf: events)
            let created = Set(events.lazy.filter { $0.kind == .created }.map(\.path))
            for change in state.changed {
                let path = roots[index].paths.path(change.directory.relativePath.appendingComponent(change.name))
                guard !created.contains(path), let entry = change.directory.children[change.name] else { continue }
                produced.append(
                    FileSystemEvent(kind: change.content ? .modified : .attributesChanged, path: path, itemType: entry.type,
                                    isSynthetic: true, identity: FileIdentity(device: device, inode: entry.inode))
                )
            }
            hardLinks.removeAll()
            registerHardLinks(state.hardLinkCandidates)
            for watch in previousWatches { releaseIfUnused(watch) }
            if newTree.watch < 0 { removeRoot(index) }
        }
    }
}
#endif
