import FileSystemEventsCore

/// A root-relative path as raw bytes, so scenarios can use names that are not valid UTF-8.
public struct RelativePath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The components joined by `/`, with no leading slash; empty for ``root``.
    public var bytes: [UInt8]

    /// Takes the bytes as given: nothing is normalised.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The string's UTF-8 bytes.
    public init(_ string: String) {
        self.bytes = Array(string.utf8)
    }

    /// Lets scenarios write paths as literals: `"a/b"`.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The watched root itself: the empty path.
    public static let root = RelativePath(bytes: [])

    /// `self` and `component` joined by `/`; if either is the root, the other comes back unchanged.
    public func appending(_ component: RelativePath) -> RelativePath {
        if bytes.isEmpty { return component }
        if component.bytes.isEmpty { return self }
        return RelativePath(bytes: bytes + [UInt8(ascii: "/")] + component.bytes)
    }

    /// The same as ``appending(_:)``: `"a" / "b"` is `a/b`.
    public static func / (lhs: RelativePath, rhs: RelativePath) -> RelativePath { lhs.appending(rhs) }

    /// The path without its last component: ``root`` for a top-level name, `nil` for the root.
    public var parent: RelativePath? {
        guard !bytes.isEmpty else { return nil }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return .root }
        return RelativePath(bytes: Array(bytes[..<slash]))
    }

    /// The last component, as a path of its own.
    public var name: RelativePath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return self }
        return RelativePath(bytes: Array(bytes[(slash + 1)...]))
    }

    /// True if `self` is `other` or lies below it.
    ///
    /// Compared in place (`compareRawBytes`, the snapshot's name order), allocating nothing:
    /// the replay model asks it of every path it holds for each directory an event removes or
    /// moves, and an `Array` of the prefix per question made it 8% of a debug conformance run.
    public func isWithin(_ other: RelativePath) -> Bool {
        let count = other.bytes.count
        if count == 0 { return true }
        guard bytes.count >= count else { return false }
        let samePrefix = bytes.withUnsafeBytes { mine in
            other.bytes.withUnsafeBytes { compareRawBytes(UnsafeRawBufferPointer(rebasing: mine[..<count]), $0) == 0 }
        }
        return samePrefix && (bytes.count == count || bytes[count] == UInt8(ascii: "/"))
    }

    /// How many components: 0 for the root, 1 for a top-level name.
    public var depth: Int { bytes.isEmpty ? 0 : bytes.filter { $0 == UInt8(ascii: "/") }.count + 1 }

    /// Byte order of the whole path, separators included (as `memcmp` sorts).
    public static func < (lhs: RelativePath, rhs: RelativePath) -> Bool { compareBytes(lhs.bytes, rhs.bytes) < 0 }

    /// The path as UTF-8 (invalid bytes as U+FFFD), with a newline shown as `\n`, so that a
    /// message keeps one path on one line.
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
