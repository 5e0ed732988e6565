/// A root-relative path as raw bytes, so scenarios can use names that are not valid UTF-8.
public struct RelativePath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    public init(_ string: String) {
        self.bytes = Array(string.utf8)
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public static let root = RelativePath(bytes: [])

    public func appending(_ component: RelativePath) -> RelativePath {
        if bytes.isEmpty { return component }
        if component.bytes.isEmpty { return self }
        return RelativePath(bytes: bytes + [UInt8(ascii: "/")] + component.bytes)
    }

    public static func / (lhs: RelativePath, rhs: RelativePath) -> RelativePath { lhs.appending(rhs) }

    public var parent: RelativePath? {
        guard !bytes.isEmpty else { return nil }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return .root }
        return RelativePath(bytes: Array(bytes[..<slash]))
    }

    public var name: RelativePath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return self }
        return RelativePath(bytes: Array(bytes[(slash + 1)...]))
    }

    /// True if `self` is `other` or lies below it.
    public func isWithin(_ other: RelativePath) -> Bool {
        if other.bytes.isEmpty { return true }
        guard bytes.count >= other.bytes.count, Array(bytes[..<other.bytes.count]) == other.bytes else { return false }
        return bytes.count == other.bytes.count || bytes[other.bytes.count] == UInt8(ascii: "/")
    }

    public var depth: Int { bytes.isEmpty ? 0 : bytes.filter { $0 == UInt8(ascii: "/") }.count + 1 }

    public static func < (lhs: RelativePath, rhs: RelativePath) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    public var description: String {
        String(decoding: bytes, as: UTF8.self).replacingNewlines()
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        var result = ""
        for character in self {
            result += character == "\n" ? "\\n" : String(character)
        }
        return result
    }
}
