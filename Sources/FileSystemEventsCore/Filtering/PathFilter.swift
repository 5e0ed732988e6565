/// Which items a source reports.
///
/// Exclusions apply to everything and prune whole subtrees: an excluded directory is never
/// listed or watched. Inclusions, when any are given, narrow the *non-directory* items reported;
/// directories always pass so the consumer's tree keeps its shape and the replay invariant
/// holds for the filtered tree.
///
/// ``maximumDepth`` prunes like an exclusion, by depth: items more than that many directory
/// levels below a root are not reported, and directories at the limit are reported but not
/// entered. ``ignoresEditorFiles`` drops the swap, backup and temporary files editors and
/// downloaders write next to the files they save (never directories).
public struct PathFilter: Sendable, Hashable {
    /// When not empty, a non-directory is reported only if one of these matches it; directories
    /// are never tested against them.
    public var include: [PathGlob]
    /// Items any of these match are left out, a directory with everything below it.
    public var exclude: [PathGlob]
    /// How many directory levels below a root are reported: 0 reports only a root's direct
    /// children (like a non-recursive watch), 1 also their children, and so on. `nil`: no limit.
    public var maximumDepth: Int?
    /// Ignore the files in ``editorFilePatterns`` (an opt-in preset).
    public var ignoresEditorFiles: Bool

    /// Checks nothing: ``WatchOptions/validate()`` rejects a `maximumDepth` outside
    /// ``WatchOptions/depthRange`` when a source starts.
    public init(include: [PathGlob] = [], exclude: [PathGlob] = [], maximumDepth: Int? = nil, ignoresEditorFiles: Bool = false) {
        self.include = include
        self.exclude = exclude
        self.maximumDepth = maximumDepth
        self.ignoresEditorFiles = ignoresEditorFiles
    }

    /// Leaves nothing out: the default of ``WatchOptions``.
    public static let everything = PathFilter()

    /// Names editors and downloaders give their swap, backup and partial files: vim's swap
    /// files and its `4913` write test, `name~` backups (vim, emacs, gedit), emacs' `.#name`
    /// lock links, Sublime Text's atomic-save temporaries, and `.part` downloads. Matched
    /// against names of non-directories only.
    public static let editorFilePatterns: [PathGlob] = [
        "*.swp", "*.swo", "*.swx", ".*.sw?", "*~", "4913", ".#*", ".subl*.tmp", "*.part",
    ].map(PathGlob.init)

    /// True when nothing is set, so every item is reported without any matching.
    public var isEmpty: Bool { include.isEmpty && exclude.isEmpty && maximumDepth == nil && !ignoresEditorFiles }

    /// Whether some directories are left out with their subtrees (by exclusion or depth), so a
    /// crawl that cannot apply the filter (a library's own recursive watch) must not be used.
    package var prunesDirectories: Bool { !exclude.isEmpty || maximumDepth != nil }

    /// Whether an item at `relativePath` (root-relative, `/`-separated, no leading slash) is reported.
    package func admits(relativePath: some Collection<UInt8>, name: some Collection<UInt8>, isDirectory: Bool) -> Bool {
        if isEmpty { return true }
        if let maximumDepth, Self.levels(of: relativePath) > maximumDepth { return false }
        for glob in exclude where glob.matches(relativePath: relativePath, name: name) { return false }
        if isDirectory { return true }
        if ignoresEditorFiles {
            for glob in Self.editorFilePatterns where glob.matches(relativePath: relativePath, name: name) { return false }
        }
        if include.isEmpty { return true }
        for glob in include where glob.matches(relativePath: relativePath, name: name) { return true }
        return false
    }

    /// Whether a source lists and watches the contents of an admitted directory at
    /// `relativePath`: not at the depth limit, where its contents would all be left out.
    package func descends(intoDirectoryAt relativePath: some Collection<UInt8>) -> Bool {
        guard let maximumDepth else { return true }
        return Self.levels(of: relativePath) < maximumDepth
    }

    /// Whether what lies below a directory moved from `previous` to `relative` (root-relative
    /// paths) may be admitted otherwise at its new paths: by depth if the move changed it, by a
    /// glob over whole paths (`build/**`, `src/**/*.c`) whatever the move. Globs over names say
    /// the same after a move.
    package func mayFilterOtherwise(movedFrom previous: some Collection<UInt8>, to relative: some Collection<UInt8>) -> Bool {
        maximumDepth != nil && Self.levels(of: previous) != Self.levels(of: relative)
            || exclude.contains(where: \.matchesWholePath) || include.contains(where: \.matchesWholePath)
    }

    /// How many directories lie between a root and the item at `relativePath`: 0 for a direct
    /// child (`a`), 1 for `a/b`, and so on.
    private static func levels(of relativePath: some Collection<UInt8>) -> Int {
        var slashes = 0
        for byte in relativePath where byte == UInt8(ascii: "/") { slashes += 1 }
        return slashes
    }
}
