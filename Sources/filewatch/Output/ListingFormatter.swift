import PlatformLibc
import FileSystemEvents

/// How `filewatch list` prints a listing and its updates: for people (aligned columns, then a
/// line per change with its position) or as JSON Lines (docs/cli-list-json.md).
struct ListingFormatter {
    enum Format {
        case text
        case json
    }

    let format: Format
    /// The list as of the last update printed, to name removed rows in text.
    private var previous: [DirectoryEntry] = []

    init(format: Format) {
        self.format = format
    }

    mutating func format(_ update: DirectoryListingUpdate) -> [UInt8] {
        defer { previous = update.entries }
        switch (update, format) {
        case (.listing(let entries), .json):
            return Self.line(.object([("kind", .string("listing")), ("entries", .array(entries.map(Self.json)))]))
        case (.listing(let entries), .text):
            return Array(Self.table(entries).utf8)
        case (.changes(let changes), .json):
            var bytes: [UInt8] = []
            if !changes.isEmpty || changes.endReason == nil { bytes += Self.line(Self.json(changes)) }
            if let reason = changes.endReason {
                bytes += Self.line(.object([("kind", .string("ended")), ("reason", .string(reason.code)), ("message", .string(reason.description))]))
            }
            return bytes
        case (.changes(let changes), .text):
            var text = Self.lines(changes, previous: previous)
            if let reason = changes.endReason { text += "ended: \(reason)\n" }
            return Array(text.utf8)
        }
    }

    // MARK: JSON

    static func json(_ entry: DirectoryEntry) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        if let name = PathText.utf8(entry.nameBytes) {
            fields.append(("name", .string(name)))
        } else {
            fields.append(("name", .string(entry.name)))
            fields.append(("nameBytes", .string(PathText.base64(entry.nameBytes))))
        }
        fields.append(("type", .string(entry.type.rawValue)))
        fields.append(("size", .int(entry.size)))
        fields.append(("modified", .string(JSONLinesFormatter.iso8601(entry.modificationTime))))
        return .object(fields)
    }

    private static func json(_ changes: DirectoryListingChanges) -> JSONValue {
        .object([
            ("kind", .string("changes")),
            ("removed", .array(changes.removed.map { .int(Int64($0)) })),
            ("inserted", .array(changes.inserted.map { .object([("index", .int(Int64($0))), ("entry", json(changes.entries[$0]))]) })),
            ("updated", .array(changes.updated.map { .object([("index", .int(Int64($0))), ("entry", json(changes.entries[$0]))]) })),
            ("moves", .array(changes.moves.map { .array([.int(Int64($0.from)), .int(Int64($0.to))]) })),
        ])
    }

    private static func line(_ value: JSONValue) -> [UInt8] {
        Array((value.encoded() + "\n").utf8)
    }

    // MARK: Text

    /// `ls -l`-like columns: type, size (right-aligned), local modification time, name.
    static func table(_ entries: [DirectoryEntry]) -> String {
        let sizeWidth = entries.map { String($0.size).count }.max() ?? 1
        var text = ""
        for entry in entries {
            text += row(entry, sizeWidth: sizeWidth) + "\n"
        }
        return text
    }

    private static func row(_ entry: DirectoryEntry, sizeWidth: Int) -> String {
        let type = entry.type.rawValue.padding(to: 9)
        let size = String(entry.size)
        let paddedSize = String(repeating: " ", count: max(0, sizeWidth - size.count)) + size
        return "\(type)  \(paddedSize)  \(localTime(entry.modificationTime))  \(PathText.escapedForTerminal(entry.nameBytes))"
    }

    /// A line per change: `-` removed (offset in the previous list), `+` inserted, `>` moved
    /// (from -> to), `~` updated in place (offset in the new list).
    private static func lines(_ changes: DirectoryListingChanges, previous: [DirectoryEntry]) -> String {
        let moveSources = Set(changes.moves.map(\.from))
        let moveDestinations = Set(changes.moves.map(\.to))
        var text = ""
        for offset in changes.removed where !moveSources.contains(offset) && offset < previous.count {
            text += "- \(offset)  \(PathText.escapedForTerminal(previous[offset].nameBytes))\n"
        }
        for offset in changes.inserted where !moveDestinations.contains(offset) {
            text += "+ \(offset)  \(summary(changes.entries[offset]))\n"
        }
        for move in changes.moves {
            let from = move.from < previous.count ? PathText.escapedForTerminal(previous[move.from].nameBytes) + " -> " : ""
            text += "> \(move.from) -> \(move.to)  \(from)\(summary(changes.entries[move.to]))\n"
        }
        for offset in changes.updated {
            text += "~ \(offset)  \(summary(changes.entries[offset]))\n"
        }
        return text
    }

    private static func summary(_ entry: DirectoryEntry) -> String {
        "\(PathText.escapedForTerminal(entry.nameBytes))  (\(entry.type.rawValue), \(entry.size) bytes, \(localTime(entry.modificationTime)))"
    }

    /// `2026-11-22 18:30:01` in the local time zone, as `ls` shows times.
    private static func localTime(_ timestamp: FileSystemEvent.Timestamp) -> String {
        var seconds = time_t(timestamp.secondsSinceEpoch)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func pad(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(parts.tm_year + 1900)-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday)) \(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec))"
    }
}
