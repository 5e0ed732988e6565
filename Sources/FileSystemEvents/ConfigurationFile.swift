public import Configuration
public import FileSystemEventsCore
public import SystemPackage
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PlatformLibc

/// The JSON configuration file (`{"filewatch": {"backend": "polling"}}`), read into the
/// values an `InMemoryProvider` serves under `filewatch.*`.
///
/// Why not swift-configuration's `FileProvider<JSONSnapshot>`: that snapshot parses with
/// `JSONSerialization`, which only full Foundation has, and full Foundation brings ICU and
/// about 6 MiB of resident memory into every program that links this module, the CLI
/// included. `JSONDecoder` is in FoundationEssentials. Reading the file here also lets each
/// problem be a sentence a user can act on, naming the file and, for a bad value, the key.
public enum ConfigurationFile {
    static let example = #"{"filewatch": {"backend": "polling"}}"#

    /// The `filewatch` member's values, keyed `filewatch.<name>`, typed as JSON typed them
    /// (a whole number is an `int`, which a `double` key also accepts). `null` is absent.
    ///
    /// - Throws: ``FileSystemEventsError/unreadableConfigurationFile(_:reason:)`` when the
    ///   file is missing, unreadable, a directory, not JSON or not an object;
    ///   ``FileSystemEventsError/invalidConfiguration(key:value:expected:)`` for a value no key
    ///   can hold (an object, or a list of mixed or nested values).
    public static func values(at path: FilePath) throws(FileSystemEventsError) -> [AbsoluteConfigKey: ConfigValue] {
        let bytes: [UInt8]
        switch read(path) {
        case .success(let read): bytes = read
        case .failure(let errno):
            switch errno {
            case .noSuchFileOrDirectory, .notDirectory:
                throw .unreadableConfigurationFile(path, reason: "the file does not exist")
            case .isDirectory:
                throw .unreadableConfigurationFile(path, reason: "it is a directory, not a JSON file")
            case .permissionDenied, .notPermitted:
                throw .unreadableConfigurationFile(path, reason: "permission denied; make it readable")
            default:
                throw .unreadableConfigurationFile(path, reason: "reading it failed (\(errno))")
            }
        }
        let document: JSONDocumentValue
        do {
            document = try JSONDecoder().decode(JSONDocumentValue.self, from: Data(bytes))
        } catch {
            throw .unreadableConfigurationFile(
                path, reason: "it is not valid JSON\(Self.detail(of: error)); expected an object such as \(example)")
        }
        guard case .object(let members) = document else {
            throw .unreadableConfigurationFile(path, reason: "its top level is not a JSON object; expected an object such as \(example)")
        }
        // JSON allows a member twice, and the decoder keeps one of them: the other would be a
        // setting silently not applied, like a misspelt key.
        if let repeated = Self.repeatedSetting(in: bytes) {
            throw .unreadableConfigurationFile(path, reason: "\(repeated) appears twice; keep one")
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        // Settings at the top level would be ignored, and a watch run as the file did not say
        // (other members are left alone: the file may hold other programs' settings too).
        if let misplaced = members.first(where: { WatchConfiguration.Key(rawValue: $0.key) != nil }) {
            throw .unreadableConfigurationFile(
                path, reason: "\"\(misplaced.key)\" is at the top level; settings go inside a \"filewatch\" member, as in \(example)")
        }
        guard let scope = members.last(where: { $0.key == "filewatch" })?.value else { return values }
        guard case .object(let settings) = scope else {
            if case .null = scope { return values }
            throw .unreadableConfigurationFile(path, reason: "its \"filewatch\" member is not an object; expected an object such as \(example)")
        }
        for (name, value) in settings {
            // A misspelt key would be a setting silently not applied.
            guard let known = WatchConfiguration.Key(rawValue: name) else {
                throw .invalidConfiguration(
                    key: "filewatch.\(name)", value: value.description,
                    expected: "a known key: \(WatchConfiguration.Key.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let key = known.displayName(in: .file(path))
            guard let content = try content(of: value, key: key) else { continue }
            values[AbsoluteConfigKey(["filewatch", name])] = ConfigValue(content, isSecret: false)
        }
        return values
    }

    private static func content(of value: JSONDocumentValue, key: String) throws(FileSystemEventsError) -> ConfigContent? {
        switch value {
        case .null: return nil
        case .bool(let flag): return .bool(flag)
        case .int(let number): return .int(number)
        case .double(let number): return .double(number)
        case .string(let text): return .string(text)
        case .array(let elements):
            // Every list setting (include, exclude) is a list of strings; a list of anything
            // else was read as no setting at all, and the watch ran without it.
            if let texts = elements.allAs({ if case .string(let t) = $0 { t } else { nil } }) { return .stringArray(texts) }
            throw .invalidConfiguration(key: key, value: value.description, expected: "a list of strings (globs)")
        case .object:
            throw .invalidConfiguration(key: key, value: value.description, expected: "a string, a number, true/false or a list")
        }
    }

    /// JSONDecoder's own explanation ("Unexpected character ... around line 1, column 2"), when
    /// it has one.
    private static func detail(of error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "" }
        let text = (context.underlyingError.map { String(describing: $0) } ?? context.debugDescription)
        let line = text.split(separator: "\n").first.map { String($0) } ?? ""
        guard !line.isEmpty, !line.contains("not valid JSON") else { return "" }
        return ": " + (line.hasSuffix(".") ? String(line.dropLast()) : line)
    }

    /// The first member of the file's `filewatch` settings given twice: a second top-level
    /// `"filewatch"`, or a key twice in one `"filewatch"` object (`"\"filewatch\""`,
    /// `"\"latency\" in \"filewatch\""`). Other members are other programs' business. The
    /// bytes are valid JSON (they decoded), so strings, nesting and commas are all there is to
    /// follow; a key is compared as written, escapes and all.
    static func repeatedSetting(in bytes: [UInt8]) -> String? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        // One level per open object or array: whether it is an object, whether the next
        // string is a member's name, the names seen, and whether it is a `filewatch` object.
        struct Level {
            var isObject: Bool
            var expectsName: Bool
            var names: Set<[UInt8]> = []
            var isSettings: Bool
        }
        var levels: [Level] = []
        var lastName: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case quote:
                var end = index + 1
                while end < bytes.count && bytes[end] != quote { end += bytes[end] == backslash ? 2 : 1 }
                let text = Array(bytes[(index + 1)..<min(end, bytes.count)])
                index = end
                if let level = levels.last, level.isObject, level.expectsName {
                    let watched = levels.count == 1 ? text == Array("filewatch".utf8) : level.isSettings
                    if watched && levels[levels.count - 1].names.contains(text) {
                        return levels.count == 1 ? "\"filewatch\"" : "\"\(String(decoding: text, as: UTF8.self))\" in \"filewatch\""
                    }
                    levels[levels.count - 1].names.insert(text)
                    levels[levels.count - 1].expectsName = false
                    lastName = text
                }
            case UInt8(ascii: "{"):
                let isSettings = levels.count == 1 && levels[0].isObject && lastName == Array("filewatch".utf8)
                levels.append(Level(isObject: true, expectsName: true, isSettings: isSettings))
            case UInt8(ascii: "["):
                levels.append(Level(isObject: false, expectsName: false, isSettings: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = levels.popLast()
            case UInt8(ascii: ","):
                if let level = levels.last, level.isObject { levels[levels.count - 1].expectsName = true }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The whole file, or why not (`EISDIR` for a directory, from `read(2)`).
    private static func read(_ path: FilePath) -> Result<[UInt8], Errno> {
        let descriptor: CInt
        switch Syscalls.open(path, flags: O_RDONLY | O_CLOEXEC) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): return .failure(errno)
        }
        defer { Syscalls.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count: Int
            switch chunk.withUnsafeMutableBytes({ Syscalls.read(descriptor, into: $0) }) {
            case .success(let read): count = read
            case .failure(let errno): return .failure(errno)
            }
            if count == 0 { return .success(bytes) }
            bytes += chunk[..<count]
            // A configuration file is small; refuse to slurp a device or a huge file.
            if bytes.count > 16 << 20 { return .failure(.fileTooLarge) }
        }
    }
}

/// Any JSON value. An object's members come in no particular order.
enum JSONDocumentValue: Decodable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONDocumentValue])
    case object([(key: String, value: JSONDocumentValue)])

    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let members = try? decoder.container(keyedBy: MemberKey.self) {
            self = .object(try members.allKeys.map { ($0.stringValue, try members.decode(JSONDocumentValue.self, forKey: $0)) })
            return
        }
        if var elements = try? decoder.unkeyedContainer() {
            var values: [JSONDocumentValue] = []
            while !elements.isAtEnd { values.append(try elements.decode(JSONDocumentValue.self)) }
            self = .array(values)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let flag = try? single.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? single.decode(Int.self) {
            self = .int(number)
        } else if let number = try? single.decode(Double.self) {
            self = .double(number)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .int(let number): "\(number)"
        case .double(let number): "\(number)"
        case .string(let text): "\"\(text)\""
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .object(let members): "{" + members.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

extension Array where Element == JSONDocumentValue {
    fileprivate func allAs<T>(_ transform: (JSONDocumentValue) -> T?) -> [T]? {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self {
            guard let value = transform(element) else { return nil }
            result.append(value)
        }
        return result
    }
}
