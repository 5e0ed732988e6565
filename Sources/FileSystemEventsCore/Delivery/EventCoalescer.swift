import SystemPackage

/// Removes events that say nothing new, without ever breaking the replay invariant.
///
/// Only `modified` and `attributesChanged` are ever dropped, and only when the same batch has
/// already said as much about the same item since the last structural change at its path: a
/// `modified` after `created` or after another `modified`. Structural events (`removed`,
/// `renamed`, `exchanged`, `overflow`, `rootRemoved`) reset what is known of the paths whose
/// item they may change: a file's removal or rename, of its own path (and the rename's other
/// one); anything else (a directory's, which moves every path below it, an item of unknown
/// type, an exchange, an overflow, a root removed), of every path. Order is preserved.
///
/// Reset only at the paths concerned, a file appended to among removals of others (a log
/// beside a build's temporary files) is told `modified` once per batch, not once per removal;
/// and the names of a file with many links, each told `attributesChanged` when another of its
/// links is removed (its link count changed), are told so once per batch, not once per
/// removal: `rm` of 6,000 links of one file was told in 2,000,000 lines.
public enum EventCoalescer {
    /// `events` without the ones that say nothing new, in order.
    public static func coalesce(_ events: [FileSystemEvent]) -> [FileSystemEvent] {
        guard events.count > 1 else { return events }
        // What has been said about each path since the last structural event that reset every
        // path. Built only once a `modified`, an `attributesChanged` or a file's removal or
        // rename asks, from the events kept since then: a batch of creations alone (a burst)
        // would otherwise hash every path for nothing.
        var said: [FilePath: Said] = [:]
        var isIndexed = false
        var segmentStart = 0
        var result: [FileSystemEvent] = []
        result.reserveCapacity(events.count)
        func index() {
            guard !isIndexed else { return }
            said.reserveCapacity(result.count - segmentStart + 1)
            for earlier in result[segmentStart...] { record(earlier, in: &said) }
            isIndexed = true
        }
        for event in events {
            switch event.kind {
            case .modified, .attributesChanged:
                index()
                let known = said[event.path, default: []]
                let repeats: Said = event.kind == .modified ? .modified : .attributes
                if known.contains(.created) || known.contains(repeats) { continue }
                record(event, in: &said)
            case .created, .settled:
                if isIndexed { record(event, in: &said) }
            case .removed, .renamed, .exchanged, .overflow, .rootRemoved:
                if resetsOnlyItsPaths(event) {
                    // What was said of the other paths stands: the record is built now, if a
                    // burst of creations had not needed it yet, to forget only these.
                    index()
                    said[event.path] = nil
                    if let previous = event.previousPath { said[previous] = nil }
                } else {
                    said.removeAll(keepingCapacity: true)
                    isIndexed = false
                    segmentStart = result.count + 1
                }
            }
            result.append(event)
        }
        return result
    }

    /// Whether a structural event may change the item at its own paths only: a file's (or
    /// symlink's, or other non-directory's) removal, at its path; its rename, at both. Every
    /// other structural event may change any path (a directory's moves every path below it,
    /// and an exchange's second item is of unknown type).
    package static func resetsOnlyItsPaths(_ event: FileSystemEvent) -> Bool {
        switch event.itemType {
        case .file, .symlink, .other: break
        case .directory, .unknown: return false
        }
        switch event.kind {
        case .removed: return true
        case .renamed: return event.previousPath != nil
        default: return false
        }
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
