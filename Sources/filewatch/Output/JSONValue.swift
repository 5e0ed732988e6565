/// Just enough JSON to write the CLI's records with a fixed key order (scripts and humans
/// diffing output both like that), written by ``JSONLineWriter`` so that every record, event
/// line or not, escapes strings the same way.
enum JSONValue {
    case string(String)
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case array([JSONValue])
    case object([(String, JSONValue)])

    func encoded() -> String {
        var writer = JSONLineWriter()
        write(into: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private func write(into out: inout JSONLineWriter) {
        switch self {
        case .string(let value): out.string(value)
        case .bool(let value): out.raw(value ? "true" : "false")
        case .int(let value):
            if value < 0 { out.byte(UInt8(ascii: "-")) }
            out.unsigned(value.magnitude)
        case .uint(let value): out.unsigned(value)
        case .array(let values):
            out.byte(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.byte(UInt8(ascii: ",")) }
                value.write(into: &out)
            }
            out.byte(UInt8(ascii: "]"))
        case .object(let fields):
            out.byte(UInt8(ascii: "{"))
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { out.byte(UInt8(ascii: ",")) }
                out.string(key)
                out.byte(UInt8(ascii: ":"))
                value.write(into: &out)
            }
            out.byte(UInt8(ascii: "}"))
        }
    }
}
