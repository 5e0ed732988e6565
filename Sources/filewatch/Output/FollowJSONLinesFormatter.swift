import FileSystemEvents

/// The JSON Lines contract of `filewatch follow --format json` (docs/cli-follow-json.md).
///
/// A chunk may end inside a multi-byte UTF-8 character. Those trailing bytes (at most three)
/// are held back and lead the next data record of the same file, so text that is valid UTF-8
/// always comes out as `text`; a record whose bytes are still not valid UTF-8 carries them in
/// base64 as `bytes`. Held bytes are written out before any notice and at the end.
struct FollowJSONLinesFormatter {
    private var held: [UInt8] = []
    private var heldGeneration = 0
    private var heldOffset: Int64 = 0

    mutating func format(_ update: FileFollowerUpdate) -> [UInt8] {
        switch update {
        case .data(let chunk):
            var bytes = chunk.bytes
            var offset = chunk.offset
            var out: [UInt8] = []
            if !held.isEmpty {
                if heldGeneration == chunk.generation && heldOffset + Int64(held.count) == chunk.offset {
                    bytes = held + bytes
                    offset = heldOffset
                    held = []
                } else {
                    out += flush()
                }
            }
            let keep = Self.incompleteTail(bytes)
            if keep > 0 {
                held = Array(bytes[(bytes.count - keep)...])
                heldGeneration = chunk.generation
                heldOffset = offset + Int64(bytes.count - keep)
                bytes.removeLast(keep)
            }
            if !bytes.isEmpty { out += Self.record(bytes, generation: chunk.generation, offset: offset) }
            return out
        case .notice(let notice):
            let record = JSONValue.object([
                ("kind", .string(notice.kind.rawValue)),
                ("generation", .int(Int64(notice.generation))),
            ])
            return flush() + Array((record.encoded() + "\n").utf8)
        }
    }

    /// The held bytes as a record of their own, if any.
    mutating func flush() -> [UInt8] {
        guard !held.isEmpty else { return [] }
        defer { held = [] }
        return Self.record(held, generation: heldGeneration, offset: heldOffset)
    }

    private static func record(_ bytes: [UInt8], generation: Int, offset: Int64) -> [UInt8] {
        var fields: [(String, JSONValue)] = [
            ("kind", .string("data")),
            ("generation", .int(Int64(generation))),
            ("offset", .int(offset)),
        ]
        if let text = String(validating: bytes, as: UTF8.self) {
            fields.append(("text", .string(text)))
        } else {
            fields.append(("bytes", .string(PathText.base64(bytes))))
        }
        return Array((JSONValue.object(fields).encoded() + "\n").utf8)
    }

    /// How many trailing bytes form the start of a UTF-8 character that the chunk cuts off
    /// (0 when it ends on a character boundary, or its end is not UTF-8 anyway).
    static func incompleteTail(_ bytes: [UInt8]) -> Int {
        var index = bytes.count - 1
        var continuation = 0
        while index >= 0 && continuation < 3 && bytes[index] & 0xC0 == 0x80 {
            continuation += 1
            index -= 1
        }
        guard index >= 0 else { return 0 }
        let lead = bytes[index]
        let length = lead >= 0xF0 && lead < 0xF8 ? 4 : lead >= 0xE0 && lead < 0xF0 ? 3 : lead >= 0xC2 && lead < 0xE0 ? 2 : 1
        let present = continuation + 1
        return length > 1 && present < length ? present : 0
    }
}
