import FileSystemEventsConformance
import Foundation
import Testing

/// `filewatch list` end to end: the listing once, bad input, and the live JSON Lines contract
/// of docs/cli-list-json.md, applied by a script's rules to its own copy of the list and
/// compared with a fresh `filewatch list` of the directory.
@Suite(.serialized)
struct ListCommandTests {
    @Test("list once: sorted JSON, hidden entries only with --all, exit 0")
    func listOnce() async throws {
        let tree = try ScratchTree()
        try tree.write("b", "bbbb")
        try tree.write("a", "a")
        try tree.write(".hidden", "h")
        try tree.makeDirectory("dir")
        let (status, lines, _) = try await FilewatchProcess.run(["list", tree.root.string, "--format", "json", "--sort", "size", "--descending"])
        #expect(status == 0)
        #expect(lines.count == 1)
        let record = try Self.object(lines[0])
        #expect(record["kind"] as? String == "listing")
        let entries = record["entries"] as? [[String: Any]] ?? []
        #expect(entries.compactMap { $0["name"] as? String } == ["dir", "b", "a"])
        let b = try #require(entries.first { $0["name"] as? String == "b" })
        #expect(b["type"] as? String == "file" && b["size"] as? Int == 4)
        #expect((b["modified"] as? String)?.hasSuffix("Z") == true)

        let (_, all, _) = try await FilewatchProcess.run(["list", tree.root.string, "--format", "json", "--all"])
        let allEntries = try Self.object(all[0])["entries"] as? [[String: Any]] ?? []
        #expect(allEntries.compactMap { $0["name"] as? String } == [".hidden", "a", "b", "dir"])

        let (textStatus, text, _) = try await FilewatchProcess.run(["list", tree.root.string])
        #expect(textStatus == 0)
        #expect(text.count == 3)
        #expect(text[0].hasPrefix("file") && text[0].hasSuffix("  a"))
        #expect(text[2].hasPrefix("directory") && text[2].hasSuffix("  dir"))
    }

    /// Root lists every directory, so this runs as `nobody` only: scripts/test.sh reruns it so.
    /// Before, the entries of a subdirectory that could not be listed were left out in silence.
    @Test("times beyond what 64-bit nanoseconds hold are given as that limit, and sort last, not wrapped into the past")
    func timesBeyond2262() async throws {
        let tree = try ScratchTree()
        try tree.write("recent", "r")
        try tree.write("future", "f")
        // 2300-01-01T00:00:00Z; a file system whose times stop short of it clamps it itself.
        var times = [timespec(tv_sec: 10_413_792_000, tv_nsec: 0), timespec(tv_sec: 10_413_792_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, tree.path("future").string, &times, 0) == 0)
        var status = stat()
        #expect(stat(tree.path("future").string, &status) == 0)
        guard status.st_mtim.tv_sec > 9_223_372_036 else { return }
        let (exit, lines, _) = try await FilewatchProcess.run(["list", tree.root.string, "--format", "json", "--sort", "modified"])
        #expect(exit == 0)
        let entries = try Self.object(lines[0])["entries"] as? [[String: Any]] ?? []
        #expect(entries.compactMap { $0["name"] as? String } == ["recent", "future"], "\(lines)")
        let future = try #require(entries.first { $0["name"] as? String == "future" })
        // Wrapped, it read 1715-06-13T00:25:26.290448384Z.
        #expect(future["modified"] as? String == "2262-04-11T23:47:16.854775807Z", "\(lines)")
    }

    @Test("list --recursive names on stderr a subdirectory it cannot list, and lists the rest",
          .enabled(if: geteuid() != 0, "root can list every directory; scripts/test.sh runs this as nobody"))
    func unreadableSubdirectory() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("locked")
        try tree.write("locked/inside", "x")
        try tree.write("open", "o")
        try tree.changeMode("locked", to: 0)
        defer { try? tree.changeMode("locked", to: 0o755) }
        let (status, lines, error) = try await FilewatchProcess.run(["list", "--recursive", tree.root.string, "--format", "json"])
        #expect(status == 0, "\(error)")
        #expect(error.contains("cannot list") && error.contains(tree.path("locked").string), "\(error)")
        let entries = try Self.object(lines[0])["entries"] as? [[String: Any]] ?? []
        #expect(entries.compactMap { $0["name"] as? String } == ["locked", "open"])
    }

    @Test("bad input: one line on stderr, exit 2", arguments: [
        (["list", "/nonexistent/filewatch-test"], "does not exist"),
        (["list", "/nonexistent/filewatch-test", "--live"], "does not exist"),
        (["list", ".", "--sort", "colour"], "--sort"),
        (["list", ".", "--live", "--latency=-1"], "--latency"),
        // Spelled apart, `-1` is the value too, not a flag (as `watch` takes it).
        (["list", ".", "--live", "--latency", "-1"], "--latency must be a number of seconds from 0 to 86400 (got -1.0)"),
        (["list", ".", "--live", "--poll-interval", "-1"], "--poll-interval must be a number of seconds"),
        (["list", ".", "--live", "--backend", "nonsense"], "--backend"),
    ])
    func badInput(arguments: [String], expected: String) async throws {
        let (status, output, error) = try await FilewatchProcess.run(arguments)
        #expect(status == 2)
        #expect(output.isEmpty)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains(expected), "\(error)")
    }

    @Test("a file is not a directory")
    func notADirectory() async throws {
        let tree = try ScratchTree()
        try tree.write("file", "f")
        let (status, _, error) = try await FilewatchProcess.run(["list", tree.path("file").string])
        #expect(status == 2)
        #expect(error.contains("not a directory"))
    }

    @Test("live JSON Lines: apply every record, match a fresh listing, end when the directory goes", arguments: ["polling", "auto"])
    func liveJSON(backend: String) async throws {
        let tree = try ScratchTree()
        try tree.write("a", "a")
        try tree.write("c", "c")
        let live = try FilewatchProcess(["list", tree.root.string, "--live", "--format", "json", "--backend", backend,
                                         "--poll-interval", "0.05", "--sort", "size"])
        try await live.waitForLine("the listing") { $0.contains(#""kind":"listing""#) }

        try tree.write("b", "grows")
        try tree.rename("a", to: "z")
        try tree.append("c", "cccccccc")
        try tree.remove("z")
        try tree.write(RelativePath(bytes: Array("odd".utf8) + [0xFF]), "x")
        try tree.write("marker")
        try await live.waitForLine("the marker") { $0.contains(#""name":"marker""#) }
        var list = try Self.replay(live.outputLines)
        var fresh = try await Self.freshListing(tree, sort: "size")
        if list != fresh {
            // A polling scan may have seen the marker before a straggler; one more change settles it.
            try tree.write("marker2")
            try await live.waitForLine("the second marker") { $0.contains(#""name":"marker2""#) }
            list = try Self.replay(live.outputLines)
            fresh = try await Self.freshListing(tree, sort: "size")
        }
        #expect(list == fresh)
        #expect(live.outputLines.contains { $0.contains("nameBytes") })

        try tree.removeTree(.root)
        #expect(try await live.waitForExit() == 0)
        let last = try Self.object(try #require(live.outputLines.last))
        #expect(last["kind"] as? String == "ended")
        #expect(last["reason"] as? String == "removed")
        #expect(try Self.replay(live.outputLines).isEmpty)
    }

    /// Run by a user without `CAP_DAC_READ_SEARCH`: a name moved into a directory made `r--`
    /// for a moment could not be examined, and was dropped as if gone; once the directory could
    /// be searched again, nothing told of it (inotify and inotifytools, 10 of 10).
    @Test("run unprivileged: what is moved into a directory that cannot be searched for a moment is listed once it can",
          arguments: ["inotify", "inotifytools", "polling"])
    func movedIntoAnUnsearchableDirectory(backend: String) async throws {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
              try await FilewatchRobustnessTests.availableBackends().contains(backend) else { return }
        let tree = try ScratchTree()
        // The scratch directory is the test's (0700): the user must reach the tree.
        for path in [tree.root.removingLastComponent(), tree.root] { #expect(chmod(path.string, 0o777) == 0) }
        try tree.makeDirectories("d")
        try tree.write("src", "s")
        try tree.makeDirectories("srcd/in")
        try tree.write("srcd/in/f", "f")
        let live = try FilewatchProcess(["list", tree.root.string, "--live", "--recursive", "--format", "json", "--backend", backend,
                                         "--poll-interval", "0.05"], unprivilegedUser: 65534)
        try await live.waitForLine("the listing") { $0.contains(#""kind":"listing""#) }
        #expect(chmod(tree.path("d").string, 0o744) == 0)
        try tree.rename("src", to: "d/x")
        try tree.rename("srcd", to: "d/y")
        // Searchable again only once the listing has taken the moves in, while it could not
        // look at what they brought.
        try await live.waitForLine("the moves") { _ in
            (try? Self.replay(live.outputLines).contains { $0.name == "src" || $0.name == "srcd" }) == false
        }
        #expect(chmod(tree.path("d").string, 0o755) == 0)
        try tree.write("marker")
        try await live.waitForLine("the marker") { $0.contains(#""name":"marker""#) }
        var names = try Self.replay(live.outputLines).map(\.name)
        if !names.contains("d/y/in/f") {
            // A polling scan may have seen the marker before the directory's mode; one more change settles it.
            try tree.write("marker2")
            try await live.waitForLine("the second marker") { $0.contains(#""name":"marker2""#) }
            names = try Self.replay(live.outputLines).map(\.name)
        }
        live.signal(SIGINT)
        #expect(try await live.waitForExit() == 0)
        #expect(names.filter { !$0.hasPrefix("marker") } == ["d", "d/x", "d/y", "d/y/in", "d/y/in/f"], "\(backend): \(names)")
    }

    /// A listing descends one call per level, and a batch looked at every directory above each
    /// change, at every level: on a chain 3,000 deep `list --recursive` crashed (SIGSEGV, its
    /// scan on a task's stack, debug build), and `list --live` took 20 s to show one file made
    /// at the bottom and 14 s to show 2,000 (deployment build).
    @Test("a chain of directories 3,000 deep: list --recursive lists it, list --live shows a burst made at the bottom and its removal",
          arguments: ["inotify", "polling"])
    func deepChain(backend: String) async throws {
        let tree = try ScratchTree()
        let top = tree.absolute("chain", in: .root)
        let depth = 3_000
        try DeepChain.make(top, depth: depth)
        // ScratchTree's removal holds a descriptor per level.
        defer { DeepChain.remove(top) }
        let (status, lines, error) = try await FilewatchProcess.run(["list", tree.root.string, "--recursive", "--format", "json"])
        #expect(status == 0, "\(error)")
        let once = try lines.first.map { try Self.object($0)["entries"] as? [Any] }
        #expect(once??.count == depth + 1)

        let live = try FilewatchProcess(["list", tree.root.string, "--live", "--recursive", "--format", "json", "--backend", backend,
                                         "--poll-interval", "0.05"])
        try await live.waitForLine("the listing") { $0.contains(#""kind":"listing""#) }
        let burst = 200
        try DeepChain.atBottom(top, depth: depth) { directory in
            for index in 0..<burst {
                let made = openat(directory, "b\(index)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
                guard made >= 0 else { throw CLITestFailure("create at the bottom: errno \(errno)") }
                close(made)
            }
        }
        try await live.waitForLine("the last of the burst") { $0.contains(#""kind":"changes""#) && $0.contains("/b\(burst - 1)\"") }
        let withBurst = try Self.replay(live.outputLines)
        #expect(withBurst.count == depth + 1 + burst)
        #expect(withBurst.filter { $0.name.hasSuffix("/b7") }.count == 1)

        try DeepChain.atBottom(top, depth: depth) { directory in
            for index in 0..<burst { unlinkat(directory, "b\(index)", 0) }
        }
        try tree.write("marker")
        try await live.waitForLine("the marker") { $0.contains(#""name":"marker""#) }
        var names = try Self.replay(live.outputLines).map(\.name)
        if names.count != depth + 2 {
            // A polling scan may have seen the marker before the last removals; one more change settles it.
            try tree.write("marker2")
            try await live.waitForLine("the second marker") { $0.contains(#""name":"marker2""#) }
            names = try Self.replay(live.outputLines).map(\.name).filter { $0 != "marker2" }
        }
        live.signal(SIGINT)
        #expect(try await live.waitForExit() == 0)
        #expect(names.count == depth + 2 && names.allSatisfy { $0 == "marker" || $0 == "chain" || $0.hasPrefix("chain/d") && !$0.contains("/b") },
                "\(backend): \(names.count) names")
    }

    @Test("live text: a line per change with its position; SIGINT exits 0")
    func liveText() async throws {
        let tree = try ScratchTree()
        try tree.write("a", "a")
        let live = try FilewatchProcess(["list", tree.root.string, "--live", "--backend", "polling", "--poll-interval", "0.05"])
        try await live.waitForLine("the listing") { $0.hasSuffix("  a") }
        try tree.write("b", "b")
        let inserted = try await live.waitForLine("the insertion") { $0.hasPrefix("+ 1  b") }
        try tree.rename("a", to: "c")
        let moved = try await live.waitForLine("the move") { $0.hasPrefix(">") }
        live.signal(SIGINT)
        #expect(try await live.waitForExit() == 0)
        #expect(inserted.contains("1 bytes"))
        #expect(moved.contains("0 -> 1") && moved.contains("a -> c"))
    }

    // MARK: A script's view of the contract

    /// An entry as a script compares it: every field.
    struct Entry: Hashable {
        var name: String
        var nameBytes: String?
        var type: String
        var size: Int
        var modified: String

        init(_ object: [String: Any]) throws {
            name = try #require(object["name"] as? String)
            nameBytes = object["nameBytes"] as? String
            type = try #require(object["type"] as? String)
            size = try #require(object["size"] as? Int)
            modified = try #require(object["modified"] as? String)
        }
    }

    /// Applies the records as docs/cli-list-json.md says: `removed` from the highest offset down,
    /// `inserted` from the lowest up, then `updated` in place.
    static func replay(_ lines: [String]) throws -> [Entry] {
        var list: [Entry] = []
        for line in lines {
            let record = try object(line)
            switch record["kind"] as? String {
            case "listing":
                list = try (record["entries"] as? [[String: Any]] ?? []).map(Entry.init)
            case "changes":
                for offset in (record["removed"] as? [Int] ?? []).sorted(by: >) { list.remove(at: offset) }
                for insertion in (record["inserted"] as? [[String: Any]] ?? []).sorted(by: { ($0["index"] as? Int ?? 0) < ($1["index"] as? Int ?? 0) }) {
                    list.insert(try Entry(try #require(insertion["entry"] as? [String: Any])), at: try #require(insertion["index"] as? Int))
                }
                for update in record["updated"] as? [[String: Any]] ?? [] {
                    list[try #require(update["index"] as? Int)] = try Entry(try #require(update["entry"] as? [String: Any]))
                }
            default:
                continue
            }
        }
        return list
    }

    static func freshListing(_ tree: ScratchTree, sort: String) async throws -> [Entry] {
        let (status, lines, error) = try await FilewatchProcess.run(["list", tree.root.string, "--format", "json", "--sort", sort])
        guard status == 0, let line = lines.first else { throw CLITestFailure("list failed: \(error)") }
        return try (try object(line)["entries"] as? [[String: Any]] ?? []).map(Entry.init)
    }

    static func object(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw CLITestFailure("not a JSON object: \(line)")
        }
        return object
    }
}
