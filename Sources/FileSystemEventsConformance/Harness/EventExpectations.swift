import FileSystemEventsCore
import SystemPackage

extension WatchSession {
    /// Fails unless an event of `kind` for `path` (and `type`, if given) arrived since `index`.
    func expect(
        _ kind: FileSystemEvent.Kind,
        _ path: RelativePath,
        type: FileItemType? = nil,
        since index: Int = 0
    ) throws {
        let absolute = tree.path(path)
        let found = scenarioEvents(from: index).contains { event in
            event.kind == kind && event.path == absolute && (type == nil || event.itemType == type)
        }
        try check(found, "expected \(kind.rawValue) \(type.map { "\($0.rawValue) " } ?? "")\(path); got:\n  \(describeEvents(since: index))")
    }

    /// Fails unless an item was reported created that ends up at `path`: created there, or
    /// created at a path that later `renamed` and `exchanged` events carried to `path`.
    ///
    /// A backend may list a new directory a moment after it has been renamed and written to,
    /// and report what it found where the rename's event, read later, still finds it: `created
    /// d/inside`, then `renamed f (from d)`. To a consumer that applies events in order that
    /// is the same history as `created f/inside`, and the replay invariant checks the rest.
    func expectCreated(endingAt path: RelativePath, since index: Int = 0) throws {
        let target = tree.path(path)
        var carried: [FilePath] = []
        func rebase(_ item: FilePath, from old: FilePath, to new: FilePath) -> FilePath? {
            guard item.starts(with: old) else { return nil }
            return new.appending(item.components.dropFirst(old.components.count))
        }
        for event in scenarioEvents(from: index) {
            switch event.kind {
            case .created:
                carried.append(event.path)
            case .removed:
                carried.removeAll { $0.starts(with: event.path) }
            case .renamed:
                guard let old = event.previousPath else { continue }
                carried = carried.compactMap { item in
                    if let moved = rebase(item, from: old, to: event.path) { return moved }
                    return item.starts(with: event.path) ? nil : item
                }
            case .exchanged:
                guard let other = event.previousPath else { continue }
                carried = carried.map { item in
                    rebase(item, from: other, to: event.path) ?? rebase(item, from: event.path, to: other) ?? item
                }
            default:
                continue
            }
        }
        try check(carried.contains(target), "expected created \(path), or created where renames carried it to \(path); got:\n  \(describeEvents(since: index))")
    }

    /// Fails if any event of `kind` for `path` arrived since `index`.
    func expectNo(_ kind: FileSystemEvent.Kind, _ path: RelativePath, since index: Int = 0) throws {
        let absolute = tree.path(path)
        let found = scenarioEvents(from: index).contains { $0.kind == kind && $0.path == absolute }
        try check(!found, "unexpected \(kind.rawValue) \(path); got:\n  \(describeEvents(since: index))")
    }

    /// Fails if any event at or below `path` arrived since `index`.
    func expectNothing(within path: RelativePath, since index: Int = 0) throws {
        let absolute = tree.path(path)
        let found = scenarioEvents(from: index).filter { $0.path.starts(with: absolute) || ($0.previousPath?.starts(with: absolute) ?? false) }
        try check(found.isEmpty, "expected no events within \(path); got:\n  \(found.map(\.description).joined(separator: "\n  "))")
    }

    /// A rename, as one `renamed` event for a backend that pairs renames, otherwise as the
    /// `removed` + `created` pair that says the same.
    func expectRename(from old: RelativePath, to new: RelativePath, since index: Int = 0) throws {
        let oldPath = tree.path(old)
        let newPath = tree.path(new)
        let events = scenarioEvents(from: index)
        if source.capabilities.pairsRenames {
            let found = events.contains { $0.kind == .renamed && $0.path == newPath && $0.previousPath == oldPath }
            try check(found, "expected renamed \(old) -> \(new); got:\n  \(describeEvents(since: index))")
        } else {
            try expect(.removed, old, since: index)
            try expect(.created, new, since: index)
        }
    }

    func describeEvents(since index: Int) -> String {
        let events = scenarioEvents(from: index)
        if events.isEmpty { return "(no events)" }
        return events.prefix(40).map(\.description).joined(separator: "\n  ")
    }
}
