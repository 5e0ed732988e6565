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
