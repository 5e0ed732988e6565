/// Which items a source reports.
///
/// Exclusions apply to everything and prune whole subtrees: an excluded directory is never
/// listed or watched. Inclusions, when any are given, narrow the *non-directory* items reported;
/// directories always pass so the consumer's tree keeps its shape and the replay invariant
/// holds for the filtered tree.
public struct PathFilter: Sendable, Hashable {
    public var include: [PathGlob]
    public var exclude: [PathGlob]

    public init(include: [PathGlob] = [], exclude: [PathGlob] = []) {
        self.include = include
        self.exclude = exclude
    }

    public static let everything = PathFilter()

    public var isEmpty: Bool { include.isEmpty && exclude.isEmpty }

    /// Whether an item at `relativePath` (root-relative, `/`-separated, no leading slash) is reported.
    package func admits(relativePath: some Collection<UInt8>, name: some Collection<UInt8>, isDirectory: Bool) -> Bool {
        if isEmpty { return true }
        for glob in exclude where glob.matches(relativePath: relativePath, name: name) { return false }
        if isDirectory || include.isEmpty { return true }
        for glob in include where glob.matches(relativePath: relativePath, name: name) { return true }
        return false
    }
}
