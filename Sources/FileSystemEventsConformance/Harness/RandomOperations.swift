import FileSystemEventsCore

/// A reproducible stream of file-system operations for the random-mix scenario: every kind of
/// change the suite knows, chosen and aimed by a seeded generator, so a failure names its seed
/// and replays exactly.
package struct RandomOperations {
    private var generator: SplitMix64
    private let tree: ScratchTree
    private var counter = 0
    /// Names carry the seed so runs of several seeds on one tree never collide.
    private let tag: String
    package private(set) var log: [String] = []

    package init(seed: UInt64, tree: ScratchTree) {
        self.generator = SplitMix64(seed: seed)
        self.tree = tree
        self.tag = "s\(seed)-"
    }

    package mutating func step() throws {
        let disk = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        let files = disk.items.filter { $0.value.type == .file && !WatchSession.isMarkerName($0.key) }.map(\.key).sorted()
        let directories = disk.items.filter { $0.value.type == .directory }.map(\.key).sorted()
        let places = [RelativePath.root] + directories
        counter += 1
        let fresh = RelativePath("\(tag)n\(counter)")

        switch generator.next() % 15 {
        case 0, 1:
            let path = pick(places) / RelativePath("\(tag)f\(counter).txt")
            try tree.write(path, "created \(counter)")
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
            log.append("delete \(file)")
        case 5, 6:
            guard let file = pickOptional(files) else { return try step() }
            let destination = pick(places) / fresh
            try tree.rename(file, to: destination)
            log.append("rename \(file) -> \(destination)")
        case 7:
            var path = pick(places) / fresh
            for level in 0..<Int(generator.next() % 3) { path = path / RelativePath("d\(level)") }
            try tree.makeDirectories(path)
            try tree.write(path / "leaf.txt", "leaf \(counter)")
            log.append("mkdir-p \(path)")
        case 8:
            guard let directory = pickOptional(directories) else { return try step() }
            let candidates = places.filter { !$0.isWithin(directory) }
            let destination = pick(candidates) / fresh
            try tree.rename(directory, to: destination)
            log.append("rename-dir \(directory) -> \(destination)")
        case 9:
            guard let directory = pickOptional(directories) else { return try step() }
            try tree.removeTree(directory)
            log.append("rm-rf \(directory)")
        case 10:
            guard let file = pickOptional(files) else { return try step() }
            try tree.changeMode(file, to: generator.next() % 2 == 0 ? 0o600 : 0o644)
            log.append("chmod \(file)")
        case 11:
            let link = pick(places) / RelativePath("\(tag)l\(counter)")
            try tree.symlink(link, pointingTo: "somewhere\(counter)")
            log.append("symlink \(link)")
        case 12:
            guard let file = pickOptional(files) else { return try step() }
            try tree.rename(file, to: RelativePath("\(tag)out\(counter)"), to: .outside)
            log.append("move-out \(file)")
        case 13:
            let staging = RelativePath("\(tag)in\(counter)")
            try tree.makeDirectories(staging / "sub", in: .outside)
            try tree.write(staging / "sub/carried.txt", "carried", in: .outside)
            let destination = pick(places) / fresh
            try tree.rename(staging, to: destination, from: .outside)
            log.append("move-in \(destination)")
        default:
            guard files.count >= 2 else { return try step() }
            let first = pick(files)
            let second = pick(files.filter { $0 != first })
            let temporary = RelativePath("\(tag)swap\(counter)")
            try tree.rename(first, to: temporary)
            try tree.rename(second, to: first)
            try tree.rename(temporary, to: second)
            log.append("swap \(first) <-> \(second)")
        }
    }

    private mutating func pick<T>(_ items: [T]) -> T {
        items[Int(generator.next() % UInt64(items.count))]
    }

    private mutating func pickOptional<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : pick(items)
    }
}

/// A small, well-known generator, so a seed means the same operations on every platform.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension WatchSession {
    static func isMarkerName(_ path: RelativePath) -> Bool {
        path.name.bytes.starts(with: Array(markerPrefix.utf8))
    }
}
