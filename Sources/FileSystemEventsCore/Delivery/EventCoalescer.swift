import SystemPackage

/// Removes events that say nothing new, without ever breaking the replay invariant.
///
/// Only `modified` and `attributesChanged` are ever dropped, and only when the same batch has
/// already said as much about the same item since the last structural change: a `modified`
/// after `created` or after another `modified`. Structural events (`removed`, `renamed`,
/// `exchanged`, `overflow`, `rootRemoved`) reset what is known, since they can change which item a path
/// names. Order is preserved.
public enum EventCoalescer {
    /// `events` without the ones that say nothing new, in order.
    public static func coalesce(_ events: [FileSystemEvent]) -> [FileSystemEvent] {
        guard events.count > 1 else { return events }
        // What has been said about each path since the last structural event. Built only once a
        // `modified` or `attributesChanged` asks, from the events kept since then: a batch of
        // creations alone (a burst) would otherwise hash every path for nothing.
        var said: [FilePath: Said] = [:]
        var isIndexed = false
        var segmentStart = 0
        var result: [FileSystemEvent] = []
        result.reserveCapacity(events.count)
        for event in events {
            switch event.kind {
            case .modified, .attributesChanged:
                if !isIndexed {
                    said.reserveCapacity(result.count - segmentStart + 1)
                    for earlier in result[segmentStart...] { record(earlier, in: &said) }
                    isIndexed = true
                }
                let known = said[event.path, default: []]
                let repeats: Said = event.kind == .modified ? .modified : .attributes
                if known.contains(.created) || known.contains(repeats) { continue }
                record(event, in: &said)
            case .created, .settled:
                if isIndexed { record(event, in: &said) }
            case .removed, .renamed, .exchanged, .overflow, .rootRemoved:
                said.removeAll(keepingCapacity: true)
                isIndexed = false
                segmentStart = result.count + 1
            }
            result.append(event)
        }
        return result
    }

    /// Notes what a kept event says about its path. (A dropped event would change nothing, so
    /// replaying the kept ones rebuilds the same record.)
    private static func record(_ event: FileSystemEvent, in said: inout [FilePath: Said]) {
        switch event.kind {
        case .modified: said[event.path, default: []].insert(.modified)
        case .attributesChanged: said[event.path, default: []].insert(.attributes)
        case .created: said[event.path] = .created
        // Never dropped, and a write after it starts a new session the consumer must hear of.
        case .settled: said[event.path] = nil
        case .removed, .renamed, .exchanged, .overflow, .rootRemoved: break
        }
    }

    private struct Said: OptionSet {
        let rawValue: UInt8
        static let created = Said(rawValue: 1)
        static let modified = Said(rawValue: 2)
        static let attributes = Said(rawValue: 4)
    }
}
