import FileSystemEvents

/// The JSON Lines contract of `filewatch watch --format json` (docs/cli-json.md): one object
/// per line, keys in a fixed order, kinds spelled exactly as the event model spells them.
struct JSONLinesFormatter: EventFormatter {
    func ready(backend: String, roots: [FilePath]) -> [UInt8] {
        var fields: [(String, JSONValue)] = [
            ("kind", .string("ready")),
            ("backend", .string(backend)),
            ("roots", .array(roots.map { .string(PathText.utf8($0.bytes) ?? lossy($0)) })),
        ]
        let undecodable = roots.filter { PathText.utf8($0.bytes) == nil }
        if !undecodable.isEmpty {
            fields.append(("rootsBytes", .array(roots.map { .string(PathText.base64($0.bytes)) })))
        }
        fields.append(("time", .string(Self.iso8601(.now()))))
        return Array((JSONValue.object(fields).encoded() + "\n").utf8)
    }

    func events(_ events: [FileSystemEvent]) -> [UInt8] {
        // About 150 bytes a line; the array grows on its own past that.
        var line = JSONLineWriter(capacity: events.count * 160)
        for event in events {
            line.raw("{\"kind\":")
            line.string(event.kind.rawValue)
            line.byte(UInt8(ascii: ","))
            line.path(event.path, key: "path", bytesKey: "pathBytes")
            if let previousPath = event.previousPath {
                line.byte(UInt8(ascii: ","))
                line.path(previousPath, key: "previousPath", bytesKey: "previousPathBytes")
            }
            line.raw(",\"type\":")
            line.string(event.itemType.rawValue)
            if event.isSynthetic { line.raw(",\"synthetic\":true") }
            if let identity = event.identity {
                line.raw(",\"device\":")
                line.unsigned(identity.device)
                line.raw(",\"inode\":")
                line.unsigned(identity.inode)
            }
            if let stableID = event.stableID {
                line.raw(",\"id\":")
                line.string(stableID.description)
            }
            if let original = event.duplicateOf {
                line.byte(UInt8(ascii: ","))
                line.path(original, key: "duplicateOf", bytesKey: "duplicateOfBytes")
            }
            if let madeAt = event.madeAt {
                line.byte(UInt8(ascii: ","))
                line.path(madeAt, key: "madeAt", bytesKey: "madeAtBytes")
            }
            line.raw(",\"time\":")
            line.timestamp(event.timestamp)
            line.raw("}\n")
        }
        return line.bytes
    }

    private func lossy(_ path: FilePath) -> String {
        String(decoding: path.bytes, as: UTF8.self)
    }

    /// RFC 3339 in UTC with nanoseconds: `2026-11-22T08:30:00.123456789Z`, as the event lines
    /// write it (``JSONLineWriter/timestampText(_:)``).
    static func iso8601(_ timestamp: FileSystemEvent.Timestamp) -> String {
        var writer = JSONLineWriter()
        writer.timestampText(timestamp)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
