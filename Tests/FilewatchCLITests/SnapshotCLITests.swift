import FileSystemEventsConformance
import FileSystemEventsCore
import Foundation
import Synchronization
import SystemPackage
import Testing

/// `filewatch snapshot` and `filewatch changes` end to end: the JSON Lines they print replay
/// the saved tree into today's, `--update` moves the baseline, and a bad snapshot file is one
/// line on stderr and exit status 2.
@Suite(.serialized)
struct SnapshotCLITests {
    @Test("changes --since a FIFO: one line, not a snapshot, exit 2, never a wait for a writer")
    func sinceAFIFO() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("r")
        let fifo = tree.root.appending("snapshot.fifo").string
        guard mkfifo(fifo, 0o600) == 0 else { throw CLITestFailure("mkfifo: errno \(errno)") }
        let changes = try FilewatchProcess(["changes", tree.root.appending("r").string, "--since", fifo, "--format", "json"])
        let status = try await changes.waitForExit(timeout: .seconds(20))
        #expect(status == 2, "stderr: \(changes.standardError)")
        #expect(changes.standardError.hasPrefix("filewatch: error:") && changes.standardError.contains("snapshot"), "stderr: \(changes.standardError)")
    }

    @Test("snapshot and changes --since on a chain of directories 20,000 deep: a file made at the bottom since is reported")
    func deepChain() async throws {
        // The scan, the diff, the encoding and the decoding descend one call per level, and
        // the CLI ran them on its main thread: `filewatch snapshot` of a chain 10,000 deep
        // crashed (SIGSEGV). They now run on a stack made for any depth.
        let tree = try ScratchTree()
        let top = tree.absolute("chain", in: .root)
        let depth = 20_000
        try DeepChain.make(top, depth: depth)
        // ScratchTree's removal holds a descriptor per level.
        defer { DeepChain.remove(top) }
        let file = tree.path("state.fwsnap", in: .outside).string
        let (status, _, error) = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file])
        #expect(status == 0, "\(error)")
        try DeepChain.atBottom(top, depth: depth) { directory in
            let made = openat(directory, "deepest", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            guard made >= 0 else { throw CLITestFailure("create at the bottom: errno \(errno)") }
            close(made)
        }
        let (changesStatus, lines, changesError) = try await FilewatchProcess.run(
            ["changes", tree.root.string, "--since", file, "--format", "json"])
        #expect(changesStatus == 0, "\(changesError)")
        #expect(lines.count == 1 && lines.allSatisfy { $0.contains(#""kind":"created""#) && $0.contains("/d/deepest\"") },
                "\(lines.map { $0.prefix(120) })")
    }

    @Test("snapshot, change the tree, changes --format json replays; --update leaves nothing to report")
    func catchUp() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("docs/drafts")
        try tree.write("docs/drafts/plan.txt", "plan")
        try tree.write("docs/keep.txt", "keep")
        try tree.write("old.txt", "old")
        try tree.write("swap-a.txt", "a")
        try tree.write("swap-b.txt", "b")
        let file = tree.path("state.fwsnap", in: .outside).string
        let (status, output, error) = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file])
        #expect(status == 0, "\(error)")
        #expect(output.isEmpty)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        try tree.rename("docs/drafts", to: "published")  // a move across levels
        try tree.remove("old.txt")
        try tree.write("new.txt", "new")  // likely takes old.txt's inode
        try tree.append("docs/keep.txt", " more")
        try tree.rename("swap-a.txt", to: "swap-tmp")
        try tree.rename("swap-b.txt", to: "swap-a.txt")
        try tree.rename("swap-tmp", to: "swap-b.txt")
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        let (changesStatus, lines, changesError) = try await FilewatchProcess.run(
            ["changes", tree.root.string, "--since", file, "--format", "json", "--update"])
        #expect(changesStatus == 0, "\(changesError)")
        let records = try lines.map(Self.object)
        #expect(!records.contains { $0["kind"] as? String == "ready" })
        var model = ReplayModel(initial: before, root: tree.root)
        for record in records { model.apply(try Self.event(record)) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(problems)\n\(lines.joined(separator: "\n"))")
        #expect(records.contains {
            $0["kind"] as? String == "renamed" && $0["path"] as? String == tree.path("published").string
                && $0["previousPath"] as? String == tree.path("docs/drafts").string
        })

        // The snapshot was rewritten: nothing has changed since.
        let (againStatus, again, _) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file, "--format", "json"])
        #expect(againStatus == 0)
        #expect(again.isEmpty, "\(again)")

        // Text output, for people.
        try tree.write("later.txt", "later")
        let (textStatus, text, _) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file])
        #expect(textStatus == 0)
        #expect(text.count == 1 && text[0].contains("created") && text[0].contains("later.txt"), "\(text)")
    }

    /// The root directory replaced by another since the snapshot (`rm -rf t; mkdir t`): told
    /// only `rootRemoved`, and the new tree saved by `--update`, its contents were never told.
    @Test("changes --update and watch --since on a root replaced since the snapshot: rootRemoved, then the new root created with its contents")
    func rootReplaced() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("sub/deeper")
        try tree.write("a", "a")
        let file = tree.path("state.fwsnap", in: .outside).string
        #expect(try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file]).0 == 0)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        try FileManager.default.removeItem(atPath: tree.root.string)
        try FileManager.default.createDirectory(atPath: tree.root.string, withIntermediateDirectories: false)
        try tree.makeDirectories("newsub/inner")
        try tree.write("b", "b")
        try tree.write("newsub/inner/c", "c")
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        let (watchLines, watchStatus): ([String], Int32) = try await {
            let watch = try FilewatchProcess(["watch", tree.root.string, "--since", file, "--format", "json"])
            try await watch.waitForLine("ready") { $0.contains(#""kind":"ready""#) }
            watch.signal(SIGTERM)
            let status = try await watch.waitForExit()
            return (watch.outputLines, status)
        }()
        #expect(watchStatus == 0)
        let (status, lines, error) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file, "--format", "json", "--update"])
        #expect(status == 0, "\(error)")
        for (command, output) in [("watch --since", watchLines.filter { !$0.contains(#""kind":"ready""#) }), ("changes", lines)] {
            let records = try output.map(Self.object)
            #expect(records.first?["kind"] as? String == "rootRemoved", "\(command): \(output)")
            // The old tree replayed: `rootRemoved` empties it, and what follows builds the new one.
            var model = ReplayModel(initial: before, root: tree.root)
            for record in records { model.apply(try Self.event(record)) }
            let problems = model.anomalies + model.differences(from: after)
            #expect(problems.isEmpty, "\(command): \(problems)\n\(output.joined(separator: "\n"))")
        }
        // Saved: nothing more to tell.
        let (_, again, _) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file, "--format", "json"])
        #expect(again.isEmpty, "\(again)")
    }

    /// `changes --update` wrote its few lines into the pipe's buffer, which takes them
    /// whether or not anyone reads, and saved the snapshot at once: a reader that stopped
    /// before reading them lost those changes for good.
    @Test("changes --update leaves the snapshot as it was when the reader goes away before reading; --save stores today's tree elsewhere")
    func updateWaitsForTheReader() async throws {
        let tree = try ScratchTree()
        let file = tree.path("state.fwsnap", in: .outside).string
        #expect(try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file]).0 == 0)
        for index in 0..<4 { try tree.write(RelativePath("f\(index)"), "\(index)") }

        let changes = try FilewatchProcess(["changes", tree.root.string, "--since", file, "--update", "--format", "json"], readsOutput: false)
        let writtenBefore = ContinuousClock.now + .seconds(60)
        while changes.bytesWaitingInOutput == 0 && ContinuousClock.now < writtenBefore {
            try await Task.sleep(for: .milliseconds(10))
        }
        changes.closeOutput()  // the reader goes away, having read nothing
        #expect(try await changes.waitForExit() == 0, "\(changes.standardError)")
        #expect(changes.standardError.contains("left as it was"), "\(changes.standardError)")
        let (_, unsaved, _) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file, "--format", "json"])
        #expect(unsaved.count == 4, "the changes the reader never read are lost: \(unsaved)")

        let next = tree.path("next.fwsnap", in: .outside).string
        let (status, told, error) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file, "--save", next, "--format", "json"])
        #expect(status == 0 && told.count == 4, "\(error)")
        #expect(try await FilewatchProcess.run(["changes", tree.root.string, "--since", file]).1.count == 4, "--save changed the snapshot")
        #expect(try await FilewatchProcess.run(["changes", tree.root.string, "--since", next]).1.isEmpty, "--save did not store today's tree")
        let (both, _, bothError) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file, "--update", "--save", next])
        #expect(both == 2 && bothError.contains("--save"), "\(bothError)")
    }

    /// Root reads every directory, so this runs as `nobody` only: scripts/test.sh reruns it so.
    /// A directory that cannot be listed stands in a diff with what it held (so nothing in it
    /// is told removed), and both commands say on stderr which one was left out; before, they
    /// said nothing, and a catch-up silently missed what changed in it.
    @Test("an unreadable directory: snapshot and changes name it on stderr, and tell nothing in it removed",
          .enabled(if: geteuid() != 0, "root can list every directory; scripts/test.sh runs this as nobody"))
    func unreadableDirectory() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("locked")
        try tree.write("locked/inside.txt", "x")
        try tree.write("open.txt", "o")
        let file = tree.path("state.fwsnap", in: .outside).string
        var (status, output, error) = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file])
        #expect(status == 0, "\(error)")
        try tree.changeMode("locked", to: 0)
        defer { try? tree.changeMode("locked", to: 0o755) }
        try tree.write("open.txt", "changed")
        (status, output, error) = try await FilewatchProcess.run(["changes", tree.root.string, "--since", file, "--format", "json"])
        #expect(status == 0, "\(error)")
        #expect(error.contains("cannot list") && error.contains(tree.path("locked").string), "\(error)")
        let events = try output.map { try Self.event(Self.object($0)) }
        #expect(!events.contains { $0.path == tree.path("locked/inside.txt") }, "\(output)")
        #expect(events.contains { $0.kind == .modified && $0.path == tree.path("open.txt") }, "\(output)")
        (status, output, error) = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file])
        #expect(status == 0, "\(error)")
        #expect(error.contains("not in the snapshot") && error.contains(tree.path("locked").string), "\(error)")
    }

    @Test("a bad snapshot file is exit status 2 with one line that names the problem")
    func badSnapshotFiles() async throws {
        let tree = try ScratchTree()
        try tree.write("a.txt", "a")
        let file = tree.path("state.fwsnap", in: .outside)
        let (status, _, _) = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file.string])
        #expect(status == 0)
        let bytes = try tree.read("state.fwsnap", in: .outside)

        func expectRefused(_ content: [UInt8]?, since: String? = nil, root: String? = nil, saying phrase: String) async throws {
            if let content { try Data(content).write(to: URL(fileURLWithPath: file.string)) }
            let (code, output, error) = try await FilewatchProcess.run(["changes", root ?? tree.root.string, "--since", since ?? file.string])
            #expect(code == 2, "\(phrase): \(error)")
            #expect(output.isEmpty)
            #expect(error.split(separator: "\n").count == 1, "\(error)")
            #expect(error.contains(phrase), "\(error)")
        }
        try await expectRefused(Array(bytes.dropLast(3)), saying: "truncated")
        var flipped = bytes
        flipped[flipped.count - 2] ^= 0x10
        try await expectRefused(flipped, saying: "corrupted")
        var future = bytes
        future[8] = 9
        try await expectRefused(future, saying: "format version 9")
        try await expectRefused(Array("hello".utf8), saying: "not a filewatch snapshot")
        try await expectRefused(bytes, root: tree.outside.string, saying: "was taken of \(tree.root.string)")
        try await expectRefused(nil, since: tree.path("absent", in: .outside).string, saying: "does not exist")

        // snapshot into a directory that does not exist
        let (code, _, error) = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", tree.path("no/such/file", in: .outside).string])
        #expect(code == 2)
        #expect(error.contains("cannot write snapshot file"))
        // changes of a root that is gone
        try await expectRefused(bytes, root: tree.path("gone").string, saying: "was taken of")
    }

    @Test("watch --since: the catch-up, ready, then live changes, with a burst running across the switch", arguments: ["polling", "auto"])
    func catchUpThenLive(backend: String) async throws {
        let tree = try ScratchTree()
        for index in 0..<20 { try tree.write(RelativePath("f\(index).txt"), "\(index)") }
        try tree.makeDirectories("a/b/c")
        try tree.write("a/b/c/deep.txt", "deep")
        try tree.makeDirectory("burst")
        let file = tree.path("state.fwsnap", in: .outside).string
        let (status, _, error) = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file])
        #expect(status == 0, "\(error)")
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        // While "the service is down".
        try tree.rename("a/b", to: "moved-b")
        for index in 0..<5 { try tree.remove(RelativePath("f\(index).txt")) }
        for index in 0..<5 { try tree.write(RelativePath("g\(index).txt"), "new \(index)") }
        try tree.append("f10.txt", " changed")

        // Restart with a burst of creates, renames and deletes that runs before, across and
        // after `ready`, until 200 operations after the ready line was seen.
        let readySeen = Atomic<Bool>(false)
        let burstRoot = tree.path("burst").string
        let burst = Task.detached {
            var afterReady = 0
            var index = 0
            while afterReady < 200 {
                let slot = index % 40
                let name = "\(burstRoot)/n\(slot)"
                let renamed = "\(burstRoot)/m\(slot)"
                let fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
                if fd >= 0 { close(fd) }
                rename(name, renamed)
                unlink("\(burstRoot)/m\((index + 20) % 40)")
                if index % 7 == 0 { mkdir("\(burstRoot)/d\(slot)", 0o755) }
                if index % 11 == 0 { rmdir("\(burstRoot)/d\((slot + 13) % 40)") }
                index += 1
                if readySeen.load(ordering: .acquiring) { afterReady += 1 }
            }
        }
        // However the wait for ready ends, a failure included, the burst then ends too.
        defer { readySeen.store(true, ordering: .releasing) }
        let watch = try FilewatchProcess(
            ["watch", tree.root.string, "--since", file, "--format", "json", "--backend", backend, "--poll-interval", "0.05"])
        try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        readySeen.store(true, ordering: .releasing)
        await burst.value
        try tree.write("end-marker.txt", "end")
        try await watch.waitForLine("the end marker") { $0.contains("end-marker.txt") }
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0, "\(watch.standardError)")
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        let records = try watch.outputLines.map(Self.object)
        #expect(records.filter { $0["kind"] as? String == "ready" }.count == 1)
        let readyIndex = try #require(records.firstIndex { $0["kind"] as? String == "ready" })
        // The offline changes come before ready.
        #expect(records[..<readyIndex].contains { $0["kind"] as? String == "renamed" && $0["path"] as? String == tree.path("moved-b").string })
        var model = ReplayModel(initial: before, root: tree.root)
        for record in records where record["kind"] as? String != "ready" { model.apply(try Self.event(record)) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(backend): \(problems.prefix(10))")
    }

    @Test("watch --since refuses a snapshot taken with other options, or several roots")
    func catchUpOptionsMustMatch() async throws {
        let tree = try ScratchTree()
        let file = tree.path("state.fwsnap", in: .outside).string
        _ = try await FilewatchProcess.run(["snapshot", tree.root.string, "--output", file, "--exclude", "*.tmp"])
        let (status, _, error) = try await FilewatchProcess.run(["watch", tree.root.string, "--since", file, "--backend", "polling"])
        #expect(status == 2)
        #expect(error.contains("other options (include/exclude patterns)"), "\(error)")
        let (several, _, severalError) = try await FilewatchProcess.run(["watch", tree.root.string, tree.outside.string, "--since", file])
        #expect(several == 2)
        #expect(severalError.contains("exactly one path"), "\(severalError)")
    }

    private static func object(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw CLITestFailure("not a JSON object: \(line)")
        }
        return object
    }

    /// A JSON Lines record as the event a script would apply.
    private static func event(_ record: [String: Any]) throws -> FileSystemEvent {
        guard let kind = (record["kind"] as? String).flatMap(FileSystemEvent.Kind.init(rawValue:)),
            let path = record["path"] as? String,
            let type = (record["type"] as? String).flatMap(FileItemType.init(rawValue:))
        else { throw CLITestFailure("not an event: \(record)") }
        return FileSystemEvent(
            kind: kind,
            path: FilePath(path),
            previousPath: (record["previousPath"] as? String).map { FilePath($0) },
            itemType: type,
            isSynthetic: record["synthetic"] as? Bool ?? false
        )
    }
}
