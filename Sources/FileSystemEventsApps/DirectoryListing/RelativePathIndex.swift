/// Relative paths (`a/b/c`) indexed by the directory that holds each, so that the paths below
/// one directory are found by walking down from it, not by testing every path held.
///
/// Why: a recursive listing keeps what each event of a batch said, and what a rename carried,
/// by path; a rename of a directory takes along what was said and carried below it. Found by
/// filtering every path, each rename cost a pass over the whole batch: 24,000 directories
/// renamed in one burst took 12 s to list (`list --live --recursive`, inotify) where `watch`
/// took 1.2 s, 91 % of the time in that filter.
struct RelativePathIndex {
    /// The paths directly below each directory on the way to a path inserted (`[]` for the
    /// top), each once.
    private var children: [[UInt8]: [[UInt8]]] = [:]
    /// Every path inserted, and every directory on the way to one: each is linked to its
    /// parent, whose own way up is then linked already.
    private var linked: Set<[UInt8]> = []

    /// Adds `path`, and the directories on the way to it that are not yet in.
    mutating func insert(_ path: [UInt8]) {
        var path = path
        while linked.insert(path).inserted {
            guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else {
                children[[], default: []].append(path)
                return
            }
            let parent = Array(path[..<slash])
            children[parent, default: []].append(path)
            path = parent
        }
    }

    /// The paths below `directory`, at any depth: every one inserted, and the directories on
    /// the way to them (which the caller's own table may not hold: it checks).
    func paths(below directory: [UInt8]) -> [[UInt8]] {
        var found: [[UInt8]] = []
        var pending = [directory]
        while let next = pending.popLast() {
            guard let below = children[next] else { continue }
            found.append(contentsOf: below)
            pending.append(contentsOf: below)
        }
        return found
    }
}
