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
        var said: [FilePath: Said] = [:]
        var result: [FileSystemEvent] = []
        result.reserveCapacity(events.count)
        for event in events {
            switch event.kind {
            case .modified:
                let known = said[event.path, default: []]
                if known.contains(.created) || known.contains(.modified) { continue }
                said[event.path, default: []].insert(.modified)
            case .attributesChanged:
                let known = said[event.path, default: []]
                if known.contains(.created) || known.contains(.attributes) { continue }
                said[event.path, default: []].insert(.attributes)
            case .created:
                said[event.path] = .created
            case .settled:
                // Never dropped, and a write after it starts a new session the consumer must hear of.
                said[event.path] = nil
            case .removed, .renamed, .exchanged, .overflow, .rootRemoved:
                said.removeAll(keepingCapacity: true)
            }
            result.append(event)
        }
        return result
    }

    private struct Said: OptionSet {
        let rawValue: UInt8
        static let created = Said(rawValue: 1)
        static let modified = Said(rawValue: 2)
        static let attributes = Said(rawValue: 4)
    }
}
