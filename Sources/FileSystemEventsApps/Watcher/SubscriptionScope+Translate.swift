import FileSystemEventsCore
import SystemPackage

extension SubscriptionScope {
    /// How `event`, already applied to `tree`, looks to this subscriber: appended to `output`.
    /// A subscribed root that is renamed follows its directory (if asked), one that is
    /// removed ends (`rootRemoved`).
    mutating func translate(
        _ event: FileSystemEvent,
        relative: [UInt8]?,
        previous: [UInt8]?,
        watcherRoot: Int,
        tree: LiveTree,
        into output: inout [FileSystemEvent]
    ) {
        switch event.kind {
        case .overflow:
            for root in roots where root.watcherRoot == watcherRoot && !root.isRemoved {
                output.append(FileSystemEvent(kind: .overflow, path: root.path, itemType: .directory, isSynthetic: false, timestamp: event.timestamp))
            }
            return
        case .rootRemoved:
            for index in roots.indices where roots[index].watcherRoot == watcherRoot && !roots[index].isRemoved {
                end(index, event: event, into: &output)
            }
            return
        default:
            break
        }
        guard let relative else { return }
        var ownRoots: [FileSystemEvent] = []
        if updateRoots(for: event, relative: relative, previous: previous, watcherRoot: watcherRoot, tree: tree, into: &ownRoots) {
            // Roots of one subscription may nest (`filewatch watch /srv /srv/www /srv/www/f`):
            // a root that contains the one this event removed, moved or replaced sees it as any
            // change, and tells it first. The subscriber keeps one tree of all its roots, so the
            // nested root's own word follows: its `rootRemoved` (a notice that changes nothing
            // in that tree, once the change that caused it was applied), and a file root's
            // `removed` or `created` only when no containing root told the change (one that
            // did would otherwise be told twice: `mv f g` as `renamed g` and `removed f`).
            // Told the other way round, `rootRemoved www` before `renamed www2 <- www` had a
            // subscriber drop the subtree that the rename then had nothing to move.
            let before = output.count
            appendSeenFromContainingRoots(event, relative: relative, previous: previous, watcherRoot: watcherRoot, tree: tree, into: &output)
            let toldFromAbove = output.count > before
            for (index, own) in ownRoots.enumerated() where own.kind == .rootRemoved || !toldFromAbove {
                // A root named twice (`watch f f`) tells its change once.
                if ownRoots[..<index].contains(where: { $0.kind == own.kind && $0.path == own.path }) { continue }
                output.append(own)
            }
            return
        }
        let isDirectory = event.itemType == .directory
        switch event.kind {
        case .created, .removed, .modified, .attributesChanged, .settled:
            if event.kind == .modified && isDirectory && !reportsDirectoryContentChanges { return }
            if isVisible(relative, in: watcherRoot, isDirectory: isDirectory) { output.append(event) }
        case .renamed:
            let from = isVisible(previous, in: watcherRoot, isDirectory: isDirectory) && !isRoot(previous, watcherRoot)
            let to = isVisible(relative, in: watcherRoot, isDirectory: isDirectory)
            appendMove(event, relative: relative, previous: previous, seen: (from, to), watcherRoot: watcherRoot, tree: tree, into: &output)
        case .exchanged:
            let first = isVisible(previous, in: watcherRoot, isDirectory: true)
            let second = isVisible(relative, in: watcherRoot, isDirectory: true)
            if first && second, let previous, let previousPath = event.previousPath,
               appendExchangeRefusedByType(event, relative: relative, previous: previous, previousPath: previousPath,
                                           watcherRoot: watcherRoot, tree: tree, into: &output) {
                return
            }
            appendMove(event, relative: relative, previous: previous, seen: (first, second), watcherRoot: watcherRoot, tree: tree, into: &output)
        case .overflow, .rootRemoved:
            break
        }
    }

    /// An exchange of two places in view where the filter refuses one of the two items at one
    /// of its places by its type (an include glob admits files by name and every directory;
    /// editor files are files): a directory `d` swapped with `f.txt` under `*.txt` puts a file
    /// at `d`, refused there. Told item by item: what the subscriber had and still sees moves
    /// (the exchange itself when both do), what it no longer sees is removed, and what it sees
    /// now for the first time is created with its contents. `false` when the filter admits
    /// both items at both places, for the exchange to be told as it is.
    private func appendExchangeRefusedByType(
        _ event: FileSystemEvent, relative: [UInt8], previous: [UInt8], previousPath: FilePath, watcherRoot: Int,
        tree: LiveTree, into output: inout [FileSystemEvent]
    ) -> Bool {
        // Applied already: what came from `previous` stands at `relative`, and the other way.
        let moved = tree.entry(at: relative), other = tree.entry(at: previous)
        let movedIsDirectory = (moved?.itemType ?? event.itemType) == .directory
        let otherIsDirectory = other?.itemType == .directory
        let movedBefore = isVisible(previous, in: watcherRoot, isDirectory: movedIsDirectory)
        let movedAfter = isVisible(relative, in: watcherRoot, isDirectory: movedIsDirectory)
        let otherBefore = isVisible(relative, in: watcherRoot, isDirectory: otherIsDirectory)
        let otherAfter = isVisible(previous, in: watcherRoot, isDirectory: otherIsDirectory)
        if movedBefore && movedAfter && otherBefore && otherAfter { return false }
        let timestamp = event.timestamp
        func removed(_ path: FilePath, _ entry: SnapshotEntry?, isDirectory: Bool) -> FileSystemEvent {
            FileSystemEvent(kind: .removed, path: path, itemType: entry?.itemType ?? (isDirectory ? .directory : .file), isSynthetic: true,
                            identity: entry.flatMap { $0.status.inode == 0 ? nil : $0.status.identity }, timestamp: timestamp)
        }
        // A directory that stays in view holds what the filter admits at its new place.
        let refiltersPaths = filter.mayFilterOtherwise(movedFrom: previous, to: relative)
        func refilter(movedFrom from: [UInt8], to place: [UInt8], path: FilePath) {
            guard refiltersPaths else { return }
            appendVisibilityChanges(movedFrom: from, to: place, path: path, watcherRoot: watcherRoot, tree: tree, timestamp: timestamp, into: &output)
        }
        if movedBefore && otherBefore {
            output.append(event)
            if movedAfter { refilter(movedFrom: previous, to: relative, path: event.path) }
            if otherAfter { refilter(movedFrom: relative, to: previous, path: previousPath) }
            if !movedAfter { output.append(removed(event.path, moved, isDirectory: movedIsDirectory)) }
            if !otherAfter { output.append(removed(previousPath, other, isDirectory: otherIsDirectory)) }
            return true
        }
        // The subscriber had one of the two items at most: that one is renamed (or removed),
        // then the other arrives where the subscriber sees it now.
        if movedBefore {
            output.append(movedAfter
                ? FileSystemEvent(kind: .renamed, path: event.path, previousPath: previousPath, itemType: event.itemType,
                                  isSynthetic: event.isSynthetic, identity: event.identity, timestamp: timestamp)
                : removed(previousPath, moved, isDirectory: movedIsDirectory))
            if movedAfter { refilter(movedFrom: previous, to: relative, path: event.path) }
        } else if otherBefore {
            output.append(otherAfter
                ? FileSystemEvent(kind: .renamed, path: previousPath, previousPath: event.path, itemType: other?.itemType ?? .file,
                                  isSynthetic: true, identity: other.flatMap { $0.status.inode == 0 ? nil : $0.status.identity },
                                  timestamp: timestamp)
                : removed(event.path, other, isDirectory: otherIsDirectory))
            if otherAfter { refilter(movedFrom: relative, to: previous, path: previousPath) }
        }
        if movedAfter && !movedBefore {
            appendArrival(at: relative, path: event.path, watcherRoot: watcherRoot, tree: tree, timestamp: timestamp, into: &output)
        }
        if otherAfter && !otherBefore {
            appendArrival(at: previous, path: previousPath, watcherRoot: watcherRoot, tree: tree, timestamp: timestamp, into: &output)
        }
        return true
    }

    private func appendSeenFromContainingRoots(
        _ event: FileSystemEvent, relative: [UInt8], previous: [UInt8]?, watcherRoot: Int,
        tree: LiveTree, into output: inout [FileSystemEvent]
    ) {
        let isDirectory = event.itemType == .directory
        switch event.kind {
        case .removed:
            if isVisibleFromAbove(relative, in: watcherRoot, isDirectory: isDirectory) { output.append(event) }
        case .renamed:
            let from = isVisibleFromAbove(previous, in: watcherRoot, isDirectory: isDirectory)
            let to = isVisibleFromAbove(relative, in: watcherRoot, isDirectory: isDirectory)
            appendMove(event, relative: relative, previous: previous, seen: (from, to), watcherRoot: watcherRoot, tree: tree, into: &output)
        case .exchanged:
            let first = isVisibleFromAbove(previous, in: watcherRoot, isDirectory: true)
            let second = isVisibleFromAbove(relative, in: watcherRoot, isDirectory: true)
            appendMove(event, relative: relative, previous: previous, seen: (first, second), watcherRoot: watcherRoot, tree: tree, into: &output)
        default:
            break  // a file root's own creation is reported already
        }
    }

    /// A rename or an exchange as this subscriber sees it, given which of its two places it
    /// sees (`seen.previous` for the event's previous path): the event itself when both, else
    /// what leaves (a rename's source: `removed`) or arrives (`created` with its contents).
    private func appendMove(
        _ event: FileSystemEvent, relative: [UInt8], previous: [UInt8]?, seen: (previous: Bool, current: Bool),
        watcherRoot: Int, tree: LiveTree, into output: inout [FileSystemEvent]
    ) {
        // An exchange names both places, always.
        if event.kind == .exchanged && (previous == nil || event.previousPath == nil) { return }
        if seen.previous && seen.current {
            output.append(event)
            guard let previous, filter.mayFilterOtherwise(movedFrom: previous, to: relative) else { return }
            if event.kind == .renamed, event.itemType == .directory {
                appendVisibilityChanges(movedFrom: previous, to: relative, path: event.path, watcherRoot: watcherRoot, tree: tree,
                                        timestamp: event.timestamp, into: &output)
            } else if event.kind == .exchanged, let previousPath = event.previousPath {
                // Both sides moved, and either may be a directory (`appendVisibilityChanges`
                // passes over a file): each now holds what the filter admits at its new place.
                appendVisibilityChanges(movedFrom: previous, to: relative, path: event.path, watcherRoot: watcherRoot, tree: tree,
                                        timestamp: event.timestamp, into: &output)
                appendVisibilityChanges(movedFrom: relative, to: previous, path: previousPath, watcherRoot: watcherRoot, tree: tree,
                                        timestamp: event.timestamp, into: &output)
            }
        } else if seen.previous, let previous, let previousPath = event.previousPath {
            if event.kind == .exchanged {
                // What stood at the unseen place now stands at the seen one.
                appendArrival(at: previous, path: previousPath, watcherRoot: watcherRoot, tree: tree, timestamp: event.timestamp, into: &output)
            } else {
                output.append(FileSystemEvent(kind: .removed, path: previousPath, itemType: event.itemType, isSynthetic: false,
                                              identity: event.identity, timestamp: event.timestamp))
            }
        } else if seen.current {
            appendArrival(at: relative, path: event.path, watcherRoot: watcherRoot, tree: tree, timestamp: event.timestamp, into: &output)
        }
    }

    /// A directory renamed in view under a filter that looks at paths (a depth limit, globs):
    /// what it holds may leave the view or come into it, since every path below it changed
    /// with it. The consumer moved what it had along with the directory; items no longer
    /// admitted are removed at their new paths (a removed directory takes its subtree), items
    /// admitted now are created there, parents first.
    private func appendVisibilityChanges(
        movedFrom previous: [UInt8], to relative: [UInt8], path: FilePath, watcherRoot: Int, tree: LiveTree,
        timestamp: FileSystemEvent.Timestamp, into output: inout [FileSystemEvent]
    ) {
        guard let directory = tree.entry(at: relative)?.directory else { return }
        let paths = PathBuilder(root: path)
        var lastHidden: [UInt8]?
        directory.forEachItem { below, child in
            // Depth first, parents first: the subtree of an item just removed follows it.
            if let lastHidden, below.isWithin(lastHidden) { return }
            let isDirectory = child.itemType == .directory
            let before = isVisible(previous.appendingComponent(below), in: watcherRoot, isDirectory: isDirectory)
            let now = isVisible(relative.appendingComponent(below), in: watcherRoot, isDirectory: isDirectory)
            if before && !now {
                lastHidden = below
                output.append(FileSystemEvent(kind: .removed, path: paths.path(below), itemType: child.itemType, isSynthetic: true,
                                              identity: child.status.inode == 0 ? nil : child.status.identity, timestamp: timestamp))
            } else if now && !before {
                output.append(Self.created(paths.path(below), child.status, timestamp))
            }
        }
    }

    /// Whether a live directory root that strictly contains `relative` reports it.
    private func isVisibleFromAbove(_ relative: [UInt8]?, in watcherRoot: Int, isDirectory: Bool) -> Bool {
        guard let relative else { return false }
        for root in roots where root.watcherRoot == watcherRoot && !root.isRemoved && !root.isFile
            && relative.isBelow(root.relative) {
            let inner = root.relative.isEmpty ? relative : Array(relative[(root.relative.count + 1)...])
            if admits(inner: inner, isDirectory: isDirectory) { return true }
        }
        return false
    }

    private func isRoot(_ relative: [UInt8]?, _ watcherRoot: Int) -> Bool {
        roots.contains { $0.watcherRoot == watcherRoot && !$0.isRemoved && $0.relative == relative }
    }

    /// An item that came into view (moved in from outside the subscription, or from an
    /// excluded place): `created` for it and everything visible below it, from the tree.
    private func appendArrival(
        at relative: [UInt8], path: FilePath, watcherRoot: Int, tree: LiveTree,
        timestamp: FileSystemEvent.Timestamp, into output: inout [FileSystemEvent]
    ) {
        guard let entry = tree.entry(at: relative), let (_, inner) = locate(relative, in: watcherRoot) else { return }
        output.append(Self.created(path, entry.status, timestamp))
        guard let directory = entry.directory else { return }
        let paths = PathBuilder(root: path)
        directory.forEachItem { below, child in
            if admits(inner: inner.appendingComponent(below), isDirectory: child.itemType == .directory) {
                output.append(Self.created(paths.path(below), child.status, timestamp))
            }
        }
    }

    static func created(_ path: FilePath, _ status: FileStatus, _ timestamp: FileSystemEvent.Timestamp) -> FileSystemEvent {
        FileSystemEvent(kind: .created, path: path, itemType: status.itemType, isSynthetic: true,
                        identity: status.inode == 0 ? nil : status.identity, timestamp: timestamp)
    }

    /// Effects of `event` on the subscribed roots themselves. Returns `true` when the event is
    /// fully accounted for.
    private mutating func updateRoots(
        for event: FileSystemEvent, relative: [UInt8], previous: [UInt8]?, watcherRoot: Int,
        tree: LiveTree, into output: inout [FileSystemEvent]
    ) -> Bool {
        var handled = false
        for index in roots.indices where roots[index].watcherRoot == watcherRoot && !roots[index].isRemoved {
            let root = roots[index]
            switch event.kind {
            case .removed:
                guard root.relative.isWithin(relative) else { continue }
                if root.isFile && root.relative == relative {
                    output.append(event)
                } else {
                    end(index, event: event, into: &output)
                }
                handled = true
            case .created:
                if root.isFile && root.relative == relative {
                    output.append(event)
                    handled = true
                }
            case .renamed:
                if let previous, root.relative.isWithin(previous) {
                    if followsRenames && !root.isFile {
                        move(index, from: previous, to: relative, tree: tree)
                    } else if root.isFile && root.relative == previous {
                        output.append(FileSystemEvent(kind: .removed, path: root.path, itemType: event.itemType, isSynthetic: false,
                                                      identity: event.identity, timestamp: event.timestamp))
                    } else {
                        end(index, event: event, into: &output)
                    }
                    handled = true
                } else if root.relative.isWithin(relative) {
                    if root.isFile && root.relative == relative {
                        output.append(FileSystemEvent(kind: .created, path: root.path, itemType: event.itemType, isSynthetic: false,
                                                      identity: event.identity, timestamp: event.timestamp))
                    } else {
                        end(index, event: event, into: &output)  // replaced by what moved over it
                    }
                    handled = true
                }
            case .exchanged:
                guard let previous else { continue }
                if root.relative.isWithin(previous) || root.relative.isWithin(relative) {
                    if followsRenames && !root.isFile {
                        let (from, to) = root.relative.isWithin(previous) ? (previous, relative) : (relative, previous)
                        move(index, from: from, to: to, tree: tree)
                    } else {
                        end(index, event: event, into: &output)
                    }
                    handled = true
                }
            default:
                continue
            }
        }
        return handled
    }

    private mutating func move(_ index: Int, from: [UInt8], to: [UInt8], tree: LiveTree) {
        let suffix = roots[index].relative.dropFirst(from.count)
        roots[index].relative = to + suffix
        roots[index].path = PathBuilder(root: tree.root).path(roots[index].relative)
    }

    private mutating func end(_ index: Int, event: FileSystemEvent, into output: inout [FileSystemEvent]) {
        roots[index].isRemoved = true
        output.append(FileSystemEvent(kind: .rootRemoved, path: roots[index].path, itemType: roots[index].isFile ? .file : .directory,
                                      isSynthetic: false, timestamp: event.timestamp))
    }

    var isEnded: Bool { roots.allSatisfy(\.isRemoved) }
}
