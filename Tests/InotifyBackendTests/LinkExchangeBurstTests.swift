#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import Foundation
import Testing

/// Random bursts of new hard links (made in the tree, or outside and moved in), writes through
/// any name, renames to new names and `renameat2` exchanges, all read in one go: the changes
/// heard at a name whose creation waits are kept for its examination
/// (``InotifyWatch/changesWhilePending``), and every exchange or rename must take them where
/// the item went, or a write through a new name is never told at the file's other names.
///
/// Scenario 110 exchanges at random but makes no hard links, and the random mixes make hard
/// links but no exchanges: this is where the two meet (three cases, each missed, are in
/// ``ChangeAtReplacedNameTests``). No name written through is removed or renamed over: that
/// is a documented limit (README, "a name removed or replaced on a file that had a single
/// name before the link").
///
/// `FILEWATCH_LINK_EXCHANGE_SEEDS=N` runs N seeds (12 by default) as a stress run.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct LinkExchangeBurstTests {
    static var seeds: Int {
        ProcessInfo.processInfo.environment["FILEWATCH_LINK_EXCHANGE_SEEDS"].flatMap { Int($0) }.map { max(1, $0) } ?? 12
    }

    @Test("bursts of hard links, writes, renames and exchanges read in one go replay to the tree on disk")
    func burstsReplay() async throws {
        for seed in 1...Self.seeds {
            try await Self.runBurst(seed: UInt64(seed))
        }
    }

    static func runBurst(seed: UInt64) async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        // Two directories, so that links, renames and exchanges cross directories, and the two
        // are sometimes exchanged whole with the names inside them.
        try tree.makeDirectory("d1")
        try tree.makeDirectory("d2")
        var files: [RelativePath] = ["a", "b", "c", "d", "d1/e", "d2/f"]
        for file in files { try tree.write(file, "\(file)") }
        var burst = Burst(seed: seed, files: files)
        // The operations are chosen now, from the burst's own model, and made together just
        // before one read.
        var operations: [Burst.Operation] = []
        for _ in 0..<20 { operations.append(burst.next()) }
        files = burst.files
        let planned = operations
        let (events, before) = try await ReadTogether.eventsOf(tree, readingTogether: { [tree] in
            for operation in planned { try? operation.perform(in: tree) }
        })

        let log = planned.map(\.description).joined(separator: "; ")
        ReadTogether.expectReplayMatches(tree, before, events, context: "seed \(seed): \(log)")
    }

    /// The operations of one burst, aimed with a model of the names it made.
    struct Burst {
        enum Operation: CustomStringConvertible {
            case link(RelativePath, to: RelativePath)
            case linkFromOutside(RelativePath, to: RelativePath, staging: RelativePath)
            case append(RelativePath, String)
            case rename(RelativePath, to: RelativePath)
            case exchange(RelativePath, RelativePath)
            case write(RelativePath, String)
            case remove(RelativePath)

            func perform(in tree: ScratchTree) throws {
                switch self {
                case .link(let name, let existing): try tree.hardLink(name, to: existing)
                case .linkFromOutside(let name, let existing, let staging):
                    try tree.hardLink(staging, to: existing, in: .outside, existingIn: .root)
                    try tree.rename(staging, to: name, from: .outside, to: .root)
                case .append(let name, let text): try tree.append(name, text)
                case .rename(let name, let destination): try tree.rename(name, to: destination)
                case .exchange(let first, let second): try tree.exchange(first, second)
                case .write(let name, let text): try tree.write(name, text)
                case .remove(let name): try tree.remove(name)
                }
            }

            var description: String {
                switch self {
                case .link(let name, let existing): "ln \(existing) \(name)"
                case .linkFromOutside(let name, let existing, _): "ln \(existing) ../out; mv ../out \(name)"
                case .append(let name, _): "append \(name)"
                case .rename(let name, let destination): "mv \(name) \(destination)"
                case .exchange(let first, let second): "exchange \(first) \(second)"
                case .write(let name, _): "write \(name)"
                case .remove(let name): "rm \(name)"
                }
            }
        }

        var generator: SplitMix64
        /// The names, in the order they were made, and the item (file) each holds.
        private(set) var files: [RelativePath]
        private var items: [RelativePath: Int] = [:]
        /// The items this burst wrote through any name: none of their names is removed or
        /// renamed over (see above), whichever names they have moved to by then.
        private var writtenItems: Set<Int> = []
        private var counter = 0

        init(seed: UInt64, files: [RelativePath]) {
            generator = SplitMix64(seed: seed &* 104_729)
            self.files = files
            for (index, file) in files.enumerated() { items[file] = index }
        }

        private func isProtected(_ name: RelativePath) -> Bool {
            items[name].map { writtenItems.contains($0) } ?? false
        }

        private mutating func add(_ name: RelativePath, holding item: Int) {
            files.append(name)
            items[name] = item
        }

        private mutating func drop(_ name: RelativePath) {
            files.removeAll { $0 == name }
            items[name] = nil
        }

        mutating func next() -> Operation {
            counter += 1
            let places: [RelativePath] = [.root, "d1", "d2"]
            let fresh = places[Int(generator.next() % 3)] / RelativePath("n\(counter)")
            if generator.next() % 10 == 0 {
                files = files.map(Self.swappingDirectories)
                items = Dictionary(uniqueKeysWithValues: items.map { (Self.swappingDirectories($0.key), $0.value) })
                return .exchange("d1", "d2")
            }
            switch generator.next() % 12 {
            case 0, 1:
                let existing = pick()
                add(fresh, holding: items[existing]!)
                return .link(fresh, to: existing)
            case 2:
                let existing = pick()
                add(fresh, holding: items[existing]!)
                return .linkFromOutside(fresh, to: existing, staging: RelativePath("staging\(counter)"))
            case 3, 4, 5:
                let name = pickRecent()
                writtenItems.insert(items[name]!)
                return .append(name, " +\(counter)")
            case 6:
                let name = pick()
                let item = items[name]!
                drop(name)
                add(fresh, holding: item)
                return .rename(name, to: fresh)
            case 7, 8:
                let first = pickRecent()
                let others = files.filter { $0 != first }
                let second = others[Int(generator.next() % UInt64(others.count))]
                (items[first], items[second]) = (items[second], items[first])
                return .exchange(first, second)
            case 9:
                // Never the last names.
                let removable = files.filter { !isProtected($0) }
                guard files.count > 2, !removable.isEmpty else { return next() }
                let name = removable[Int(generator.next() % UInt64(removable.count))]
                drop(name)
                return .remove(name)
            case 10:
                let victims = files.filter { !isProtected($0) }
                guard files.count > 2, !victims.isEmpty else { return next() }
                let victim = victims[Int(generator.next() % UInt64(victims.count))]
                let source = pickRecent()
                // Between two names of one file, rename(2) does nothing.
                guard source != victim, items[source] != items[victim] else { return next() }
                let item = items[source]!
                drop(source)
                items[victim] = item
                return .rename(source, to: victim)
            default:
                add(fresh, holding: 1_000 + counter)
                return .write(fresh, "new \(counter)")
            }
        }

        /// Where `path` is once `d1` and `d2` are exchanged.
        private static func swappingDirectories(_ path: RelativePath) -> RelativePath {
            let text = String(decoding: path.bytes, as: UTF8.self)
            if text.hasPrefix("d1/") { return RelativePath("d2/" + text.dropFirst(3)) }
            if text.hasPrefix("d2/") { return RelativePath("d1/" + text.dropFirst(3)) }
            return path
        }

        private mutating func pick() -> RelativePath {
            files[Int(generator.next() % UInt64(files.count))]
        }

        /// Mostly one of the names made last: a write or an exchange is then mostly of a name
        /// whose creation waits, where what is kept must follow the item (a write through an
        /// old name is heard there and told anyway, which would hide a loss).
        private mutating func pickRecent() -> RelativePath {
            guard generator.next() % 4 != 0 else { return pick() }
            let recent = files.suffix(3)
            return recent[recent.startIndex + Int(generator.next() % UInt64(recent.count))]
        }
    }
}
#endif
