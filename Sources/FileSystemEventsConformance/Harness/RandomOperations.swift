import FileSystemEventsCore

/// A reproducible stream of file-system operations for the random-mix scenarios: every kind of
/// change the suite knows, chosen and aimed by a seeded generator, so a failure names its seed
/// and replays exactly.
///
/// The tree is read from disk once, when the stream is made; after that the stream keeps its
/// own model of what it did, so consecutive steps run back to back with nothing but the
/// operations' own system calls in between. That is what makes a burst: races live between
/// changes that land faster than a watcher can look.
package struct RandomOperations {
    private var generator: SplitMix64
    private let tree: ScratchTree
    private var counter = 0
    /// Names carry the seed so runs of several seeds on one tree never collide.
    private let tag: String
    package private(set) var log: [String] = []

    /// The operations a failure message quotes: the last 80, or every one where failures are
    /// traced to files (`FILEWATCH_CONFORMANCE_TRACE`), whose length does not matter.
    package var logForFailure: String {
        let shown = StressSettings.tracesFailures ? log[...] : log.suffix(80)
        return shown.joined(separator: "; ")
    }

    // The tree as the operations left it (the harness's marker files aside).
    private var files: [RelativePath] = []
    private var directories: [RelativePath] = []
    private var symlinks: [RelativePath] = []
    /// Names removed or moved away lately, for recreating a name that just went away.
    private var vacated: [RelativePath] = []
    /// Files whose mode or link count this stream changed, and files it rewrote keeping their
    /// times. The two never meet: a rewrite that keeps size and mtime shows only as a moved
    /// ctime, and a polling watcher can tell it from a `chmod` or `link` only when no visible
    /// attribute changed with it (the status holds nothing else; see SnapshotDiff).
    private var attributesTouched: [RelativePath] = []
    private var quietlyRewritten: [RelativePath] = []

    package init(seed: UInt64, tree: ScratchTree) {
        self.generator = SplitMix64(seed: seed)
        self.tree = tree
        self.tag = "s\(seed)-"
        let disk = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        for (path, item) in disk.items where path != .root && !Self.isHarnessOwn(path) {
            switch item.type {
            case .file: files.append(path)
            case .directory: directories.append(path)
            case .symlink: symlinks.append(path)
            default: break
            }
        }
        files.sort()
        directories.sort()
        symlinks.sort()
    }

    /// Performs one operation (retrying with another when the chosen kind has nothing to act on).
    package mutating func step() throws {
        counter += 1
        let places = [RelativePath.root] + directories
        let fresh = RelativePath("\(tag)n\(counter)")

        switch generator.next() % 22 {
        case 0, 1:
            let path = pick(places) / RelativePath("\(tag)f\(counter).txt")
            try tree.write(path, "created \(counter)")
            files.append(path)
            log.append("create \(path)")
        case 2:
            guard let file = pickOptional(files) else { return try step() }
            try tree.append(file, " +\(counter)")
            log.append("append \(file)")
        case 3:
            guard let file = pickOptional(files) else { return try step() }
            let temporary = (file.parent ?? .root) / RelativePath(".\(tag)tmp\(counter)")
            try tree.write(temporary, "saved \(counter)")
            try tree.rename(temporary, to: file)
            log.append("atomic-save \(file)")
        case 4:
            guard let file = pickOptional(files) else { return try step() }
            try tree.remove(file)
            forget(file)
            log.append("delete \(file)")
        case 5, 6:
            guard let file = pickOptional(files) else { return try step() }
            let destination = pick(places) / fresh
            try tree.rename(file, to: destination)
            moved(file, to: destination)
            log.append("rename \(file) -> \(destination)")
        case 7:
            guard files.count >= 2 else { return try step() }
            let source = pick(files)
            let victim = pick(files.filter { $0 != source })
            // Between two links to one file, rename(2) succeeds and does nothing.
            guard !tree.isSameFile(source, victim) else { return try step() }
            try tree.rename(source, to: victim)
            forget(victim)
            moved(source, to: victim)
            log.append("rename-over \(source) -> \(victim)")
        case 8:
            var path = pick(places) / fresh
            for level in 0..<Int(generator.next() % 3) { path = path / RelativePath("d\(level)") }
            try tree.makeDirectories(path)
            try tree.write(path / "leaf.txt", "leaf \(counter)")
            var prefix = path
            while prefix != .root, !directories.contains(prefix) {
                directories.append(prefix)
                prefix = prefix.parent ?? .root
            }
            files.append(path / "leaf.txt")
            log.append("mkdir-p \(path)")
        case 9, 10:
            guard let directory = pickOptional(directories) else { return try step() }
            let candidates = places.filter { !$0.isWithin(directory) }
            let destination = pick(candidates) / fresh
            try tree.rename(directory, to: destination)
            moved(directory, to: destination)
            log.append("rename-dir \(directory) -> \(destination)")
        case 11:
            guard let directory = pickOptional(directories) else { return try step() }
            try tree.removeTree(directory)
            forget(directory)
            log.append("rm-rf \(directory)")
        case 12, 13:
            // A name that just went away comes back, as a file or as a directory with a file.
            let candidates = vacated.filter { path in
                let parent = path.parent ?? .root
                return (parent == .root || directories.contains(parent)) && !occupied(path)
            }
            guard let path = pickOptional(candidates) else { return try step() }
            if generator.next() % 2 == 0 {
                try tree.write(path, "recreated \(counter)")
                files.append(path)
                log.append("recreate-file \(path)")
            } else {
                try tree.makeDirectory(path)
                try tree.write(path / "again.txt", "again \(counter)")
                directories.append(path)
                files.append(path / "again.txt")
                log.append("recreate-dir \(path)")
            }
            vacated.removeAll { $0 == path }
        case 14:
            guard let file = pickOptional(files.filter { !quietlyRewritten.contains($0) }) else { return try step() }
            try tree.changeMode(file, to: generator.next() % 2 == 0 ? 0o600 : 0o644)
            attributesTouched.append(file)
            log.append("chmod \(file)")
        case 15:
            let link = pick(places) / RelativePath("\(tag)l\(counter)")
            let target = pickOptional(files).map { String(decoding: $0.name.bytes, as: UTF8.self) } ?? "somewhere\(counter)"
            try tree.symlink(link, pointingTo: generator.next() % 2 == 0 ? target : "somewhere\(counter)")
            symlinks.append(link)
            log.append("symlink \(link)")
        case 16:
            guard let file = pickOptional(files.filter { !quietlyRewritten.contains($0) }) else { return try step() }
            let link = pick(places) / RelativePath("\(tag)h\(counter)")
            try tree.hardLink(link, to: file)
            files.append(link)
            attributesTouched += [file, link]
            log.append("hard-link \(link) -> \(file)")
        case 17:
            // A symlink goes: deleted, or renamed to a fresh name.
            guard let link = pickOptional(symlinks) else { return try step() }
            if generator.next() % 2 == 0 {
                try tree.remove(link)
                forget(link)
                log.append("delete-symlink \(link)")
            } else {
                let destination = pick(places) / fresh
                try tree.rename(link, to: destination)
                moved(link, to: destination)
                log.append("rename-symlink \(link) -> \(destination)")
            }
        case 18:
            let movable = files + directories
            guard let item = pickOptional(movable) else { return try step() }
            try tree.rename(item, to: RelativePath("\(tag)out\(counter)"), to: .outside)
            forget(item)
            log.append("move-out \(item)")
        case 19:
            let staging = RelativePath("\(tag)in\(counter)")
            try tree.makeDirectories(staging / "sub", in: .outside)
            try tree.write(staging / "sub/carried.txt", "carried", in: .outside)
            let destination = pick(places) / fresh
            try tree.rename(staging, to: destination, from: .outside)
            directories += [destination, destination / "sub"]
            files.append(destination / "sub/carried.txt")
            log.append("move-in \(destination)")
        case 20:
            // `cp -p` over a file: same length, times put back; only the ctime moves.
            let candidates = files.filter { !attributesTouched.contains($0) && tree.linkCount($0) == 1 }
            guard let file = pickOptional(candidates) else { return try step() }
            let old = try tree.read(file)
            let new = old.map { $0 == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x") }
            try tree.rewriteKeepingTimes(file, String(decoding: new, as: UTF8.self))
            quietlyRewritten.append(file)
            log.append("rewrite-keeping-times \(file)")
        default:
            guard files.count >= 2 else { return try step() }
            let first = pick(files)
            let second = pick(files.filter { $0 != first })
            let temporary = RelativePath("\(tag)swap\(counter)")
            try tree.rename(first, to: temporary)
            try tree.rename(second, to: first)
            try tree.rename(temporary, to: second)
            for index in attributesTouched.indices { attributesTouched[index] = swapped(attributesTouched[index], first, second) }
            for index in quietlyRewritten.indices { quietlyRewritten[index] = swapped(quietlyRewritten[index], first, second) }
            log.append("swap \(first) <-> \(second)")
        }
    }

    // MARK: The model

    /// The harness's markers and queue fillers (named with the marker prefix), and what lies below them.
    private static func isHarnessOwn(_ path: RelativePath) -> Bool {
        WatchSession.isMarkerName(path.bytes)
    }

    private func occupied(_ path: RelativePath) -> Bool {
        files.contains(path) || directories.contains(path) || symlinks.contains(path)
    }

    private func swapped(_ path: RelativePath, _ first: RelativePath, _ second: RelativePath) -> RelativePath {
        path == first ? second : path == second ? first : path
    }

    /// `path` and everything below it are gone.
    private mutating func forget(_ path: RelativePath) {
        files.removeAll { $0.isWithin(path) }
        directories.removeAll { $0.isWithin(path) }
        symlinks.removeAll { $0.isWithin(path) }
        attributesTouched.removeAll { $0.isWithin(path) }
        quietlyRewritten.removeAll { $0.isWithin(path) }
        vacated.append(path)
        if vacated.count > 8 { vacated.removeFirst() }
    }

    /// `path` and everything below it now live at `destination` (which they replaced).
    private mutating func moved(_ path: RelativePath, to destination: RelativePath) {
        func rebase(_ list: inout [RelativePath]) {
            for index in list.indices where list[index].isWithin(path) {
                list[index] = RelativePath(bytes: destination.bytes + list[index].bytes.dropFirst(path.bytes.count))
            }
        }
        rebase(&files)
        rebase(&directories)
        rebase(&symlinks)
        rebase(&attributesTouched)
        rebase(&quietlyRewritten)
        vacated.append(path)
        if vacated.count > 8 { vacated.removeFirst() }
    }

    private mutating func pick<T>(_ items: [T]) -> T {
        items[Int(generator.next() % UInt64(items.count))]
    }

    private mutating func pickOptional<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : pick(items)
    }
}

/// A small, well-known generator, so a seed means the same operations on every platform. The
/// package's tests use it too, so a failing seeded run can be repeated anywhere.
package struct SplitMix64 {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
