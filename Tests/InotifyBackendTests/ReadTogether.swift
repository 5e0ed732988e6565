#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import Testing

/// Watches for tests whose changes must reach the watch in one read, as they do when they come
/// faster than it reads, and the replay check they end with.
enum ReadTogether {
    /// A watch of `tree` that reads the events of `changes` together: made just before its
    /// next read, which a write to `wake` in the tree causes. The tree as it was before them.
    static func watch(_ tree: ScratchTree, readingTogether changes: @escaping @Sendable () -> Void) async throws
        -> (reader: MarkerCollector, before: DiskTree)
    {
        let handed = ChangesBeforeNextRead()
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try ChangingBeforeReadKernel(changes: handed)
        }
        var reader = try await MarkerCollector(stream)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        handed.make(changes)
        try tree.write("wake", "w")
        try await reader.collect(until: "wake")
        return (reader, before)
    }

    /// What a watch of `tree` heard of `changes`, read together (see
    /// ``watch(_:readingTogether:)``), up to a marker written after them, and the tree as it
    /// was before them.
    static func eventsOf(_ tree: ScratchTree, readingTogether changes: @escaping @Sendable () -> Void) async throws
        -> (events: [FileSystemEvent], before: DiskTree)
    {
        var (reader, before) = try await watch(tree, readingTogether: changes)
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()
        return (reader.events, before)
    }

    /// The replay invariant over `events` from `before`, content included: a file whose content
    /// changed with no `created` or `modified` after the tree was read fails it.
    /// - Parameter context: said first in the failure message (a seed and its operations).
    static func expectReplayMatches(_ tree: ScratchTree, _ before: DiskTree, _ events: [FileSystemEvent], context: String = "",
                                    sourceLocation: SourceLocation = #_sourceLocation) {
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        var model = ReplayModel(initial: before, root: tree.root)
        for event in events { model.apply(event) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(context.isEmpty ? "" : context + "\n")\(problems)\n\(events.map { "\($0.kind) \($0.path)" }.joined(separator: "\n"))",
                sourceLocation: sourceLocation)
    }
}
#endif
