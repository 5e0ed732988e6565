#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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
        var text = ""
        for event in events {
            var fields: [(String, JSONValue)] = [("kind", .string(event.kind.rawValue))]
            Self.appendPath(event.path, named: "path", to: &fields)
            if let previousPath = event.previousPath {
                Self.appendPath(previousPath, named: "previousPath", to: &fields)
            }
            fields.append(("type", .string(event.itemType.rawValue)))
            if event.isSynthetic { fields.append(("synthetic", .bool(true))) }
            if let identity = event.identity {
                fields.append(("device", .uint(identity.device)))
                fields.append(("inode", .uint(identity.inode)))
            }
            fields.append(("time", .string(Self.iso8601(event.timestamp))))
            text += JSONValue.object(fields).encoded()
            text += "\n"
        }
        return Array(text.utf8)
    }

    /// `path` holds the path as a string; when the bytes are not valid UTF-8 it holds a
    /// display form (U+FFFD for bad bytes) and `pathBytes` the exact bytes in base64.
    private static func appendPath(_ path: FilePath, named name: String, to fields: inout [(String, JSONValue)]) {
        let bytes = path.bytes
        if let text = PathText.utf8(bytes) {
            fields.append((name, .string(text)))
        } else {
            fields.append((name, .string(String(decoding: bytes, as: UTF8.self))))
            fields.append((name + "Bytes", .string(PathText.base64(bytes))))
        }
    }

    private func lossy(_ path: FilePath) -> String {
        String(decoding: path.bytes, as: UTF8.self)
    }

    /// RFC 3339 in UTC with nanoseconds: `2026-11-22T08:30:00.123456789Z`.
    static func iso8601(_ timestamp: FileSystemEvent.Timestamp) -> String {
        var seconds = time_t(timestamp.secondsSinceEpoch)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
            + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
            + ".\(pad(timestamp.nanoseconds, 9))Z"
    }
}
