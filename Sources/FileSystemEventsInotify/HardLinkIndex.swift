#if os(Linux)
import FileSystemEventsCore

/// The paths of files that share an inode inside the watched tree, keyed by device and inode.
///
/// inotify reports a write once, under the name it was opened by; every other hard link to
/// the same inode changed too. Not only a regular file's: `link(2)` does not follow a symlink,
/// and a FIFO, a socket or a device node may have several names as well; a `lutimes` or a
/// `chmod` through one name changed them all (hard links are one item by device and inode,
/// as polling has them). Indexing files only, `touch -h` of one name of a symlink was told
/// there alone, and a listing kept the old time at the other. Only inodes with more than one
/// known path are kept, so the index costs nothing in a tree without hard links. A new link's other paths are searched for
/// in one walk of the model per batch of events, not one per link, so `cp -al` of a large tree
/// stays linear.
struct HardLinkIndex {
    private var paths: [FileIdentity: [(directory: WatchedDirectory, name: [UInt8])]] = [:]
    /// New links whose other paths have not been looked for yet.
    private var unresolved: [FileIdentity: [(WatchedDirectory, [UInt8])]] = [:]

    mutating func register(_ identity: FileIdentity, paths newPaths: [(WatchedDirectory, [UInt8])]) {
        var known = paths[identity] ?? []
        paths[identity] = nil  // held once, so that appending does not copy it
        // Thousands of names of one file are registered at once after a burst of `ln`: each
        // looked for in order made that quadratic.
        var keys: Set<NameInModel>? = newPaths.count > 4 && known.count > 16 ? Set(known.map { NameInModel($0.directory, $0.name) }) : nil
        for (directory, name) in newPaths {
            if keys != nil {
                guard keys!.insert(NameInModel(directory, name)).inserted else { continue }
            } else if known.contains(where: { $0.directory === directory && $0.name == name }) {
                continue
            }
            known.append((directory, name))
        }
        if known.count > 1 { paths[identity] = known }
    }

    /// A new link to `identity` appeared at `directory/name`; its other paths are found by
    /// ``resolve(searching:)``.
    mutating func add(_ identity: FileIdentity, _ directory: WatchedDirectory, _ name: [UInt8]) {
        if paths[identity] != nil {
            register(identity, paths: [(directory, name)])
        } else {
            unresolved[identity, default: []].append((directory, name))
        }
    }

    var hasUnresolved: Bool { !unresolved.isEmpty }

    /// Whether a file lost a name in view since ``takeLeftBehind()`` was last called.
    var hasLeftBehind: Bool { !leftBehind.isEmpty }

    /// Finds the other paths of every link added since the last call, in one walk of `trees`.
    mutating func resolve(searching trees: [WatchedDirectory]) {
        guard !unresolved.isEmpty else { return }
        var found = unresolved
        unresolved.removeAll()
        for (identity, names) in Self.names(of: Set(found.keys), in: trees) {
            var list = found[identity, default: []]
            for (node, name) in names where !list.contains(where: { $0.0 === node && $0.1 == name }) {
                list.append((node, name))
            }
            found[identity] = list
        }
        for (identity, list) in found { register(identity, paths: list) }
    }

    /// The names in `trees` of the files (or other items but directories) whose identity is
    /// one of `identities`, in the model's order, found in one walk.
    static func names(of identities: Set<FileIdentity>, in trees: [WatchedDirectory]) -> [FileIdentity: [(WatchedDirectory, [UInt8])]] {
        var found: [FileIdentity: [(WatchedDirectory, [UInt8])]] = [:]
        guard !identities.isEmpty else { return found }
        for tree in trees {
            tree.forEachDirectory { node in
                for (name, entry) in node.children where entry.type != .directory {
                    let identity = FileIdentity(device: node.device, inode: entry.inode)
                    if identities.contains(identity) { found[identity, default: []].append((node, Array(name))) }
                }
            }
        }
        return found
    }

    /// `directory/name` is no longer a name of the file in view.
    ///
    /// - Parameter movedOutOfView: the name went on elsewhere, out of view (rather than being
    ///   unlinked): ``takeLeftBehind()`` says so.
    mutating func remove(_ identity: FileIdentity?, _ directory: WatchedDirectory, _ name: [UInt8], movedOutOfView: Bool = false) {
        guard let identity, var known = paths.removeValue(forKey: identity) else { return }
        let count = known.count
        // Each name is there once (``register(_:paths:)``): found, it is moved out, not every
        // name copied (thousands of names of one file removed one by one).
        if let index = known.firstIndex(where: { $0.directory === directory && $0.name == name }) { known.remove(at: index) }
        paths[identity] = known.count > 1 ? known : nil
        if known.count < count && !known.isEmpty { noteLeftBehind(identity, known, movedOutOfView: movedOutOfView) }
    }

    /// A file of a subtree leaving the model (its directory removed, or moved out of view):
    /// its other names in view, if any, are ``takeLeftBehind()``'s.
    mutating func noteLeaving(_ identity: FileIdentity, movedOutOfView: Bool) {
        if let known = paths[identity] { noteLeftBehind(identity, known, movedOutOfView: movedOutOfView) }
    }

    /// Notes the names `known` of a file that lost one. While the index keeps the file, they are
    /// its entry there, which ``takeLeftBehind()`` reads anyway (and which follows renames and
    /// new names): only the names of a file it forgot (one left) are kept apart. Kept apart each
    /// time, a copy of thousands of names per `rm` of one of them made removing them quadratic.
    private mutating func noteLeftBehind(_ identity: FileIdentity, _ known: [(directory: WatchedDirectory, name: [UInt8])],
                                         movedOutOfView: Bool) {
        var noted = leftBehind.removeValue(forKey: identity) ?? (names: [], movedOutOfView: false)
        if paths[identity] == nil {
            for path in known where !noted.names.contains(where: { $0.directory === path.directory && $0.name == path.name }) {
                noted.names.append(path)
            }
        }
        noted.movedOutOfView = noted.movedOutOfView || movedOutOfView
        leftBehind[identity] = noted
    }

    var isEmpty: Bool { paths.isEmpty }

    /// How many names the index has for `identity`, some perhaps gone from the model since: at
    /// least as many as it has in view, but for a name it was not told of.
    func knownPathCount(of identity: FileIdentity) -> Int { paths[identity]?.count ?? 0 }

    /// One name in the model of each file with several, with its inode.
    var firstNames: [(directory: WatchedDirectory, name: [UInt8], inode: UInt64)] {
        paths.compactMap { identity, names in names.first.map { ($0.directory, $0.name, identity.inode) } }
    }

    /// Files that lost a name in view since ``takeLeftBehind()`` was last called: removed (the
    /// link count fell too) or moved out of view (it did not, and the file now has a name out
    /// of view; see `InotifyWatch+HardLinkWatches.swift`).
    private var leftBehind: [FileIdentity: (names: [(directory: WatchedDirectory, name: [UInt8])], movedOutOfView: Bool)] = [:]

    /// The names still in view of the files that lost one, as the model has them now; names
    /// no longer in it are forgotten. `movedOutOfView`: one of the names lost was moved out of
    /// view, rather than unlinked.
    mutating func takeLeftBehind() -> [(directory: WatchedDirectory, name: [UInt8], movedOutOfView: Bool)] {
        guard !leftBehind.isEmpty else { return [] }
        var names: [(directory: WatchedDirectory, name: [UInt8], movedOutOfView: Bool)] = []
        for (identity, lost) in leftBehind {
            // The names noted then, and those the index has now: a name of the file added since
            // is one, and the index's own list may not be replaced by one without it.
            var noted = lost.names
            for path in paths[identity] ?? [] where !noted.contains(where: { $0.directory === path.directory && $0.name == path.name }) {
                noted.append(path)
            }
            let live = noted.filter { Self.holds($0, identity) }
            if paths[identity] != nil { paths[identity] = live.count > 1 ? live : nil }
            names.append(contentsOf: live.map { ($0.directory, $0.name, lost.movedOutOfView) })
        }
        leftBehind.removeAll()
        return names
    }

    /// A name of the file renamed within view. Also among the names noted for
    /// ``takeLeftBehind()``: noted before the rename, the old name no longer holds the file
    /// when they are taken, and the new one must be there instead (`rm c; mv a d`, read
    /// together, of a file with names `a`, `b`, `c`: the index was left with `b` alone, and a
    /// write through `b` was not told at `d`; scenario 28 at seed 2118020 on inotifytools).
    mutating func move(_ identity: FileIdentity?, from source: WatchedDirectory, _ sourceName: [UInt8], to destination: WatchedDirectory, _ destinationName: [UInt8]) {
        guard let identity else { return }
        if var known = paths[identity], let index = known.firstIndex(where: { $0.directory === source && $0.name == sourceName }) {
            known[index] = (destination, destinationName)
            paths[identity] = known
        }
        if !leftBehind.isEmpty, var lost = leftBehind[identity],
           let index = lost.names.firstIndex(where: { $0.directory === source && $0.name == sourceName }) {
            lost.names[index] = (destination, destinationName)
            leftBehind[identity] = lost
        }
    }

    mutating func removeAll() {
        paths.removeAll()
        unresolved.removeAll()
        leftBehind.removeAll()
    }

    /// Every live path of `identity`, the one given first (it is where the kernel saw the
    /// change, whether or not the index has it: a subtree crawled again has new places).
    func paths(of identity: FileIdentity?, at directory: WatchedDirectory, _ name: [UInt8]) -> [(WatchedDirectory, [UInt8])] {
        guard let identity else { return [(directory, name)] }
        return Self.paths(livePaths(of: identity), startingAt: directory, name)
    }

    /// The paths the index has for `identity` that still hold the file, in its order.
    fileprivate func livePaths(of identity: FileIdentity) -> [(WatchedDirectory, [UInt8])] {
        guard let known = paths[identity] else { return [] }
        var live: [(WatchedDirectory, [UInt8])] = []
        for path in known where Self.holds(path, identity) {
            live.append((path.directory, path.name))
        }
        return live
    }

    /// Whether `path` still holds the file `identity` in the model.
    private static func holds(_ path: (directory: WatchedDirectory, name: [UInt8]), _ identity: FileIdentity) -> Bool {
        path.directory.isAttached && path.directory.children[path.name]?.inode == identity.inode
    }

    /// `live`, a file's names in view, with `directory/name` first (whether or not among them).
    fileprivate static func paths(_ live: [(WatchedDirectory, [UInt8])], startingAt directory: WatchedDirectory,
                                  _ name: [UInt8]) -> [(WatchedDirectory, [UInt8])] {
        var result = [(directory, name)]
        result.reserveCapacity(live.count + 1)
        for path in live where !(path.0 === directory && path.1 == name) { result.append(path) }
        return result
    }
}

/// The names in view of the files that one pass looks at (a batch of new links, an audit of
/// every file), each file's found once for the pass.
///
/// Why: ``HardLinkIndex/paths(of:at:_:)`` looks up every name the index has for the file in the
/// model, and a pass looks at a file under each of its new names: a file given thousands of
/// names in one burst took time quadratic in their number (10,000 `ln` of one file were told
/// in 9 s, nearly all of it in that lookup). Valid while neither the model nor the index
/// changes, which holds within a pass: it adds watches and reports, nothing else.
struct LinkNamesInView {
    struct Names {
        /// The paths the index has for the file that still hold it.
        let live: [(WatchedDirectory, [UInt8])]
        private let keys: Set<NameInModel>

        init(_ live: [(WatchedDirectory, [UInt8])]) {
            self.live = live
            self.keys = live.count > Self.linearLimit ? Set(live.map { NameInModel($0.0, $0.1) }) : []
        }

        /// Up to this many names are searched in order.
        private static var linearLimit: Int { 8 }

        func contains(_ directory: WatchedDirectory, _ name: [UInt8]) -> Bool {
            if live.count > Self.linearLimit { return keys.contains(NameInModel(directory, name)) }
            return live.contains { $0.0 === directory && $0.1 == name }
        }

        /// How many names the file has in view, `directory/name` (where it was just seen) among them.
        func count(including directory: WatchedDirectory, _ name: [UInt8]) -> Int {
            live.count + (contains(directory, name) ? 0 : 1)
        }

        /// The file's names in view, `directory/name` first.
        func paths(startingAt directory: WatchedDirectory, _ name: [UInt8]) -> [(WatchedDirectory, [UInt8])] {
            HardLinkIndex.paths(live, startingAt: directory, name)
        }
    }

    private var byFile: [FileIdentity: Names] = [:]

    init() {}

    /// The names of `identity` in view, looked up in `index` the first time this pass asks.
    mutating func names(of identity: FileIdentity, in index: HardLinkIndex) -> Names {
        if let names = byFile[identity] { return names }
        let names = Names(index.livePaths(of: identity))
        byFile[identity] = names
        return names
    }
}
#endif
