public import FileSystemEventsCore
package import SystemPackage

/// A consumer's copy of the tree, built the way the contract says a consumer builds it:
/// start from the tree at `ready`, apply every event in order.
///
/// It is strict on purpose. An event that cannot be applied (a rename whose source the
/// consumer never heard of, a `created` under a missing parent, a `modified` of nothing) is an
/// *anomaly*: real consumers would diverge there, so a scenario fails on any anomaly even if
/// the final trees happen to match.
public struct ReplayModel: Sendable {
    public struct Item: Sendable, Equatable {
        public var type: FileItemType
        /// The content hash the consumer knows from the initial tree; `nil` once an event told
        /// it to re-read (created, modified), since it would then read the new content.
        public var knownContent: UInt64?
    }

    public private(set) var items: [RelativePath: Item]
    public private(set) var anomalies: [String] = []
    public private(set) var rootRemoved = false
    private let root: PathBuilder

    package init(initial: DiskTree, root: FilePath) {
        var items: [RelativePath: Item] = [:]
        for (path, item) in initial.items {
            items[path] = Item(type: item.type, knownContent: item.contentHash)
        }
        self.items = items
        self.root = PathBuilder(root: root)
    }

    package mutating func apply(_ event: FileSystemEvent) {
        guard let path = relative(event.path) else {
            if event.kind != .overflow { anomalies.append("\(event): path outside the watched root") }
            return
        }
        switch event.kind {
        case .created:
            if path == .root {
                // A single watched file came back (replaced); the root is the item itself.
                items[.root] = Item(type: event.itemType, knownContent: nil)
                return
            }
            if let parent = path.parent, parent != .root, items[parent]?.type != .directory {
                anomalies.append("\(event): parent \(parent) is not a known directory")
            }
            removeSubtree(path)
            items[path] = Item(type: event.itemType, knownContent: nil)
        case .removed:
            if path == .root {
                items[.root] = nil
                return
            }
            if items[path] == nil {
                anomalies.append("\(event): nothing known at \(path)")
            }
            removeSubtree(path)
        case .renamed:
            guard let previousPath = event.previousPath, let previous = relative(previousPath) else {
                anomalies.append("\(event): rename without a previous path inside the root")
                return
            }
            guard items[previous] != nil else {
                anomalies.append("\(event): rename source \(previous) is not known")
                return
            }
            if let parent = path.parent, parent != .root, items[parent]?.type != .directory {
                anomalies.append("\(event): destination parent \(parent) is not a known directory")
            }
            if path.isWithin(previous) && path != previous {
                anomalies.append("\(event): moves a directory into itself")
                return
            }
            var moved: [(RelativePath, Item)] = []
            for (key, item) in items where key.isWithin(previous) {
                let suffix = Array(key.bytes.dropFirst(previous.bytes.count))
                moved.append((RelativePath(bytes: path.bytes + suffix), item))
            }
            removeSubtree(previous)
            removeSubtree(path)
            for (key, item) in moved { items[key] = item }
        case .exchanged:
            guard let previousPath = event.previousPath, let previous = relative(previousPath),
                  items[previous] != nil, items[path] != nil
            else {
                anomalies.append("\(event): exchange of items that are not both known")
                return
            }
            if path.isWithin(previous) || previous.isWithin(path) {
                anomalies.append("\(event): exchanges a directory with something inside it")
                return
            }
            var swapped: [(RelativePath, Item)] = []
            for (key, item) in items where key.isWithin(previous) {
                swapped.append((RelativePath(bytes: path.bytes + Array(key.bytes.dropFirst(previous.bytes.count))), item))
            }
            for (key, item) in items where key.isWithin(path) {
                swapped.append((RelativePath(bytes: previous.bytes + Array(key.bytes.dropFirst(path.bytes.count))), item))
            }
            removeSubtree(previous)
            removeSubtree(path)
            for (key, item) in swapped { items[key] = item }
        case .modified:
            if items[path] == nil && path != .root {
                anomalies.append("\(event): nothing known at \(path)")
            }
            items[path]?.knownContent = nil
        case .attributesChanged:
            if items[path] == nil && path != .root {
                anomalies.append("\(event): nothing known at \(path)")
            }
        case .overflow:
            break
        case .rootRemoved:
            rootRemoved = true
            items.removeAll()
        }
    }

    private mutating func removeSubtree(_ path: RelativePath) {
        guard let item = items.removeValue(forKey: path) else { return }
        if item.type == .directory {
            for key in items.keys where key.isWithin(path) {
                items[key] = nil
            }
        }
    }

    private func relative(_ path: FilePath) -> RelativePath? {
        root.relative(path).map { RelativePath(bytes: $0) }
    }

    /// Differences between this model and the disk, as lines a person can act on; empty when
    /// the replay invariant holds (structure, types, and every content change announced).
    package func differences(from disk: DiskTree) -> [String] {
        var lines: [String] = []
        for (path, item) in disk.items.sorted(by: { $0.key < $1.key }) {
            guard let known = items[path] else {
                lines.append("missing from replay: \(path) (\(item.type.rawValue))")
                continue
            }
            if known.type != item.type {
                lines.append("type differs at \(path): replay \(known.type.rawValue), disk \(item.type.rawValue)")
            } else if item.type == .file, let knownContent = known.knownContent, knownContent != item.contentHash {
                lines.append("content of \(path) changed without a created or modified event")
            }
        }
        for (path, item) in items.sorted(by: { $0.key < $1.key }) where disk.items[path] == nil && path != .root {
            lines.append("replay has \(path) (\(item.type.rawValue)) that is not on disk")
        }
        return lines
    }
}
