public import FileSystemEventsCore
package import SystemPackage

/// A consumer's copy of the watched trees, built the way the contract says a consumer builds
/// it: start from the trees at `ready`, apply every event in order, re-read a file's content
/// when an event says it was created or modified.
///
/// It is strict on purpose. An event that cannot be applied (a rename whose source the
/// consumer never heard of, a `created` under a missing parent, a `modified` of nothing) is an
/// *anomaly*: real consumers would diverge there, so a scenario fails on any anomaly even if
/// the final trees happen to match.
///
/// Every root is modelled, each with its root item at ``RelativePath/root`` (see ``DiskTree``);
/// a rename from one root into another moves the subtree between them.
public struct ReplayModel: Sendable {
    /// One item of the consumer's copy: its type, and what the consumer knows of its content.
    public struct Item: Sendable, Equatable {
        /// The type from the tree at `ready`, or from the event that created the item.
        public var type: FileItemType
        /// The content hash the consumer last read (from the tree at `ready`, or when a
        /// `created` or `modified` event made it re-read); `nil` when that read proved nothing.
        public var knownContent: UInt64?
        /// Which file that read opened.
        public var contentIdentity: FileIdentity?
        /// The event that made the consumer read did not say which file it meant; the read is
        /// trusted only if the same file is still there at the end.
        public var contentNeedsSameFile = false

        init(type: FileItemType, observation: ContentObservation?, needsSameFile: Bool) {
            self.type = type
            self.knownContent = observation?.hash
            self.contentIdentity = observation?.identity
            self.contentNeedsSameFile = needsSameFile
        }
    }

    /// Per root, in the order of ``roots``.
    public private(set) var trees: [[RelativePath: Item]]
    /// Every event that could not be applied, described; a scenario fails on any.
    public private(set) var anomalies: [String] = []
    /// Whether a `rootRemoved` event was applied (it empties that root's tree).
    public private(set) var rootRemoved = false
    package let roots: [FilePath]
    private let rootBytes: [[UInt8]]

    /// The first root's items.
    public var items: [RelativePath: Item] { trees.first ?? [:] }

    package init(initial: [DiskTree], roots: [FilePath]) {
        self.roots = roots
        self.rootBytes = roots.map(\.bytes)
        self.trees = roots.indices.map { index in
            var items: [RelativePath: Item] = [:]
            guard index < initial.count else { return items }
            for (path, item) in initial[index].items {
                let observation = item.contentHash.flatMap { hash in item.identity.map { ContentObservation(hash: hash, identity: $0) } }
                items[path] = Item(type: item.type, observation: observation, needsSameFile: false)
            }
            return items
        }
    }

    package init(initial: DiskTree, root: FilePath) {
        self.init(initial: [initial], roots: [root])
    }

    /// Applies one event; `observed` is what the consumer read when it received the event
    /// (``ContentObservation/forEvent(_:)``), `nil` when it read nothing.
    package mutating func apply(_ event: FileSystemEvent, observed: ContentObservation? = nil) {
        // Identity appears only when it is known: inode 0 is no file's, a placeholder.
        if let identity = event.identity, identity.inode == 0 {
            anomalies.append("\(event): carries inode 0 (identity must be left out when unknown)")
        }
        guard let (root, path) = locate(event.path) else {
            if event.kind != .overflow { anomalies.append("\(event): path outside the watched roots") }
            return
        }
        switch event.kind {
        case .created:
            if let parent = path.parent, trees[root][parent]?.type != .directory {
                anomalies.append("\(event): parent \(parent) is not a known directory")
            }
            removeSubtree(path, in: root)
            trees[root][path] = read(event, observed)
        case .removed:
            if let known = trees[root][path] {
                checkType(of: event, against: known)
            } else {
                anomalies.append("\(event): nothing known at \(path)")
            }
            removeSubtree(path, in: root)
        case .renamed:
            guard let previousPath = event.previousPath, let (sourceRoot, previous) = locate(previousPath) else {
                anomalies.append("\(event): rename without a previous path inside the roots")
                return
            }
            guard let known = trees[sourceRoot][previous] else {
                anomalies.append("\(event): rename source \(previous) is not known")
                return
            }
            checkType(of: event, against: known)
            if let parent = path.parent, trees[root][parent]?.type != .directory {
                anomalies.append("\(event): destination parent \(parent) is not a known directory")
            }
            if sourceRoot == root && path.isWithin(previous) && path != previous {
                anomalies.append("\(event): moves a directory into itself")
                return
            }
            var moved: [(RelativePath, Item)] = []
            for (key, item) in trees[sourceRoot] where key.isWithin(previous) {
                let suffix = Array(key.bytes.dropFirst(previous.bytes.count))
                moved.append((RelativePath(bytes: path.bytes + suffix), item))
            }
            removeSubtree(previous, in: sourceRoot)
            removeSubtree(path, in: root)
            for (key, item) in moved { trees[root][key] = item }
        case .exchanged:
            guard let previousPath = event.previousPath, let (otherRoot, previous) = locate(previousPath),
                  trees[otherRoot][previous] != nil, trees[root][path] != nil
            else {
                anomalies.append("\(event): exchange of items that are not both known")
                return
            }
            if otherRoot == root && (path.isWithin(previous) || previous.isWithin(path)) {
                anomalies.append("\(event): exchanges a directory with something inside it")
                return
            }
            var toPath: [(RelativePath, Item)] = []
            for (key, item) in trees[otherRoot] where key.isWithin(previous) {
                toPath.append((RelativePath(bytes: path.bytes + Array(key.bytes.dropFirst(previous.bytes.count))), item))
            }
            var toPrevious: [(RelativePath, Item)] = []
            for (key, item) in trees[root] where key.isWithin(path) {
                toPrevious.append((RelativePath(bytes: previous.bytes + Array(key.bytes.dropFirst(path.bytes.count))), item))
            }
            removeSubtree(previous, in: otherRoot)
            removeSubtree(path, in: root)
            for (key, item) in toPath { trees[root][key] = item }
            for (key, item) in toPrevious { trees[otherRoot][key] = item }
        case .modified:
            guard var item = trees[root][path] else {
                anomalies.append("\(event): nothing known at \(path)")
                return
            }
            let fresh = read(event, observed)
            item.knownContent = fresh.knownContent
            item.contentIdentity = fresh.contentIdentity
            item.contentNeedsSameFile = fresh.contentNeedsSameFile
            trees[root][path] = item
        case .attributesChanged, .settled:
            if trees[root][path] == nil {
                anomalies.append("\(event): nothing known at \(path)")
            }
        case .overflow:
            break
        case .rootRemoved:
            rootRemoved = true
            trees[root].removeAll()
        }
    }

    /// An event about an item the consumer knows names that item's type, or says it does not
    /// know it: a consumer that keeps types (a listing's icons, a sync client's
    /// "directory removed, drop its subtree") must not be told another.
    private mutating func checkType(of event: FileSystemEvent, against known: Item) {
        guard event.itemType != .unknown, event.itemType != known.type else { return }
        anomalies.append("\(event): says \(event.itemType) where the consumer was told \(known.type)")
    }

    /// The item a consumer knows after reading for `event`.
    private func read(_ event: FileSystemEvent, _ observed: ContentObservation?) -> Item {
        guard let observed else { return Item(type: event.itemType, observation: nil, needsSameFile: false) }
        if let identity = event.identity {
            // The consumer read another file than the event meant: it learnt nothing.
            if identity != observed.identity { return Item(type: event.itemType, observation: nil, needsSameFile: false) }
            return Item(type: event.itemType, observation: observed, needsSameFile: false)
        }
        return Item(type: event.itemType, observation: observed, needsSameFile: true)
    }

    private mutating func removeSubtree(_ path: RelativePath, in root: Int) {
        guard let item = trees[root].removeValue(forKey: path) else { return }
        if item.type == .directory {
            for key in trees[root].keys where key.isWithin(path) {
                trees[root][key] = nil
            }
        }
    }

    /// Which root an absolute path lies in (the first that contains it), and where in it.
    private func locate(_ path: FilePath) -> (Int, RelativePath)? {
        let bytes = path.bytes
        for (index, root) in rootBytes.enumerated() {
            if bytes == root { return (index, .root) }
            var prefix = root
            if prefix.last != UInt8(ascii: "/") { prefix.append(UInt8(ascii: "/")) }
            if bytes.count > prefix.count, bytes[..<prefix.count].elementsEqual(prefix) {
                return (index, RelativePath(bytes: Array(bytes[prefix.count...])))
            }
        }
        return nil
    }

    /// Differences between this model and the disk (one ``DiskTree`` per root), as lines a
    /// person can act on; empty when the replay invariant holds: structure, types, and every
    /// content change announced by an event after the consumer last read the file.
    ///
    /// The lines are in path order, disk side first; only the paths that differ are sorted
    /// (sorting every path of a 20,000-file tree for each check, which nearly always finds
    /// nothing, was 14% of a debug conformance run).
    package func differences(from disk: [DiskTree]) -> [String] {
        var lines: [String] = []
        for (index, items) in trees.enumerated() {
            let diskItems = index < disk.count ? disk[index].items : [:]
            let label = trees.count > 1 ? "root \(index) " : ""
            var differing: [(RelativePath, String)] = []
            for (path, item) in diskItems {
                guard let known = items[path] else {
                    differing.append((path, "missing from replay: \(label)\(describe(path)) (\(item.type.rawValue))"))
                    continue
                }
                if known.type != item.type {
                    differing.append((path, "type differs at \(label)\(describe(path)): replay \(known.type.rawValue), disk \(item.type.rawValue)"))
                } else if item.type == .file, let knownContent = known.knownContent, knownContent != item.contentHash,
                    !known.contentNeedsSameFile || known.contentIdentity == item.identity
                {
                    differing.append((path, "content of \(label)\(describe(path)) changed without a created or modified event after the consumer last read it"))
                }
            }
            lines += differing.sorted { $0.0 < $1.0 }.map(\.1)
            var extra: [(RelativePath, String)] = []
            for (path, item) in items where diskItems[path] == nil {
                extra.append((path, "replay has \(label)\(describe(path)) (\(item.type.rawValue)) that is not on disk"))
            }
            lines += extra.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return lines
    }

    package func differences(from disk: DiskTree) -> [String] {
        differences(from: [disk])
    }

    private func describe(_ path: RelativePath) -> String {
        path == .root ? "the root itself" : path.description
    }
}
