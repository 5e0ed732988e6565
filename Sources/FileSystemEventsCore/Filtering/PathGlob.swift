/// A shell-style glob over raw path bytes (names need not be UTF-8).
///
/// `*` and `?` stay within one path component, `**` crosses components (`**/`: whole
/// directories, none or more, so `**/build` is never `prebuild`), `[abc]`, `[a-z]` and
/// `[!x]` match one byte, and `\` escapes. Patterns are compiled once, matched per entry.
public struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written, before a leading or trailing `/` is dropped for matching. A
    /// pattern made of bytes that are not UTF-8 (``init(bytes:)``) shows them as U+FFFD here;
    /// ``patternBytes`` has them.
    public let pattern: String
    /// The pattern's bytes as written.
    public let patternBytes: [UInt8]
    private let bytes: [UInt8]
    /// A pattern without `/` matches an item's name; with one it matches the root-relative path.
    package let matchesWholePath: Bool

    /// Compiles `pattern` once. It never fails: an unterminated `[` matches itself. Trailing
    /// `/`s are dropped; a pattern with a `/` before its end matches root-relative paths, and a
    /// leading `/` anchors it at the root (`/build` is the root's `build` only, as in
    /// `.gitignore`, where `build` is any item so named).
    public init(_ pattern: String) {
        self.init(pattern: pattern, bytes: Array(pattern.utf8))
    }

    /// Compiles a pattern given as bytes, which need not be UTF-8: a name is bytes, and a
    /// pattern for names that are not UTF-8 must be too (`--include $'caf\xe9*'`). Otherwise
    /// as ``init(_:)``.
    public init(bytes: [UInt8]) {
        self.init(pattern: String(decoding: bytes, as: UTF8.self), bytes: bytes)
    }

    private init(pattern: String, bytes patternBytes: [UInt8]) {
        self.pattern = pattern
        self.patternBytes = patternBytes
        var bytes = patternBytes
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        let isAnchored = bytes.count > 1 && bytes.first == UInt8(ascii: "/")
        if bytes.first == UInt8(ascii: "/") && bytes.count > 1 { bytes.removeFirst() }
        self.bytes = bytes
        self.matchesWholePath = isAnchored || bytes.contains(UInt8(ascii: "/"))
    }

    /// The pattern as written.
    public var description: String { pattern }

    /// Matches `relativePath` (components joined by `/`) or its last component.
    package func matches(relativePath: some Collection<UInt8>, name: some Collection<UInt8>) -> Bool {
        matchesWholePath ? Self.match(bytes[...], Array(relativePath)[...]) : Self.match(bytes[...], Array(name)[...])
    }

    private static let slash = UInt8(ascii: "/")

    private static func match(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var p = pattern.startIndex
        var t = text.startIndex
        // Backtracking points for the most recent `*` and `**`.
        var starP = -1, starT = -1
        var globstarP = -1, globstarT = -1
        // Set when the `**` was followed by `/`: it stands for whole directories (none or
        // more), so what follows starts a component, as in `.gitignore`. Moved on a byte at a
        // time instead, `**/build` matched `prebuild` and `a/**/d` matched `a/xd`.
        var globstarEndsComponent = false
        while t < text.endIndex {
            if p < pattern.endIndex {
                let c = pattern[p]
                if c == UInt8(ascii: "*") {
                    if p + 1 < pattern.endIndex && pattern[p + 1] == UInt8(ascii: "*") {
                        // `**/` may also match nothing at all.
                        var next = p + 2
                        globstarEndsComponent = next < pattern.endIndex && pattern[next] == slash
                        if globstarEndsComponent { next += 1 }
                        globstarP = next
                        globstarT = t
                        starP = -1
                        p = next
                        continue
                    }
                    starP = p + 1
                    starT = t
                    p += 1
                    continue
                }
                if let (matched, width) = matchOne(pattern, at: p, byte: text[t]), matched {
                    p += width
                    t += 1
                    continue
                }
            }
            if starP >= 0 && text[starT] != slash {
                starT += 1
                t = starT
                p = starP
                continue
            }
            if globstarP >= 0 {
                if globstarEndsComponent {
                    // On past the next `/`: one more whole directory.
                    while globstarT < text.endIndex && text[globstarT] != slash { globstarT += 1 }
                    guard globstarT < text.endIndex else { return false }
                }
                globstarT += 1
                t = globstarT
                p = globstarP
                starP = -1
                continue
            }
            return false
        }
        while p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }

    /// Matches one pattern element at `p` against `byte`; returns the element's width.
    private static func matchOne(_ pattern: ArraySlice<UInt8>, at p: Int, byte: UInt8) -> (Bool, Int)? {
        let c = pattern[p]
        switch c {
        case UInt8(ascii: "?"):
            return (byte != slash, 1)
        case UInt8(ascii: "\\") where p + 1 < pattern.endIndex:
            return (pattern[p + 1] == byte, 2)
        case UInt8(ascii: "["):
            var i = p + 1
            var negate = false
            if i < pattern.endIndex && (pattern[i] == UInt8(ascii: "!") || pattern[i] == UInt8(ascii: "^")) {
                negate = true
                i += 1
            }
            var matched = false
            var first = true
            while i < pattern.endIndex && (first || pattern[i] != UInt8(ascii: "]")) {
                first = false
                let low = pattern[i]
                if i + 2 < pattern.endIndex && pattern[i + 1] == UInt8(ascii: "-") && pattern[i + 2] != UInt8(ascii: "]") {
                    if low <= byte && byte <= pattern[i + 2] { matched = true }
                    i += 3
                } else {
                    if low == byte { matched = true }
                    i += 1
                }
            }
            guard i < pattern.endIndex else { return (c == byte, 1) }  // unterminated: literal '['
            return (matched != negate && byte != slash, i - p + 1)
        default:
            return (c == byte, 1)
        }
    }
}
