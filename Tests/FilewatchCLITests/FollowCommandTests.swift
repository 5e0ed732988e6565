import FileSystemEventsConformance
import Foundation
import Testing

/// `filewatch follow` end to end: raw bytes to stdout and `tail -F`-style notices to stderr,
/// the JSON Lines contract of docs/cli-follow-json.md decoded back into the bytes written,
/// the starting positions, a clean exit on SIGINT and SIGTERM, and bad input.
@Suite(.serialized)
struct FollowCommandTests {
    static let backends = ["polling", "inotify"]

    @Test("raw: every line across appends, rotation and truncation; notices on stderr; SIGTERM exits 0", arguments: backends)
    func raw(backend: String) async throws {
        let tree = try ScratchTree()
        try tree.write("app.log", "line 1\n")
        let path = tree.path("app.log")
        let follow = try FilewatchProcess(["follow", path.string, "--from-start", "--backend", backend, "--poll-interval", "0.05"])
        try await follow.waitForLine("the first line") { $0 == "line 1" }
        try tree.append("app.log", "line 2\nline 3\n")
        try await follow.waitForLine("appended lines") { $0 == "line 3" }
        try tree.rename("app.log", to: "app.log.1")
        try tree.append("app.log.1", "line 4\n")  // the writer still has the old file open
        try tree.write("app.log", "line 5\n")
        try await follow.waitForLine("the new file's line") { $0 == "line 5" }
        try tree.write("app.log", "")  // truncated in place
        try tree.append("app.log", "6\n")
        try await follow.waitForLine("the line after the truncation") { $0 == "6" }
        follow.signal(SIGTERM)
        #expect(try await follow.waitForExit() == 0)
        #expect(follow.outputLines == ["line 1", "line 2", "line 3", "line 4", "line 5", "6"])
        let notices = follow.standardError
        #expect(notices.contains("app.log: file truncated"), "\(notices)")
        #expect(notices.contains("has been replaced; following new file") || notices.contains("has appeared; following new file"), "\(notices)")
    }

    @Test("json: decoding every data record gives back the bytes written; notices are records", arguments: backends)
    func json(backend: String) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        var written: [UInt8] = Array("héllo wörld\n".utf8)
        try Data(written).write(to: URL(fileURLWithPath: path.string))
        let follow = try FilewatchProcess(["follow", path.string, "--from-start", "--format", "json", "--backend", backend, "--poll-interval", "0.05"])
        try await follow.waitForLine("the first record") { $0.contains(#""kind":"data""#) }
        let binary: [UInt8] = [0xFF, 0xFE, 0x00, 0x41, 0x0A]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path.string))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(binary))
        try handle.close()
        written += binary
        try await follow.waitForLine("the binary record") { $0.contains(#""bytes":"#) }
        // Atomic replace: the new file from its first byte, after a "replaced" record.
        let replacement = Array("new file ✓\n".utf8)
        try Data(replacement).write(to: URL(fileURLWithPath: tree.path("app.tmp").string))
        try tree.rename("app.tmp", to: "app.log")
        written += replacement
        try await follow.waitForLine("the replacement") { $0.contains("new file") }
        follow.signal(SIGINT)
        #expect(try await follow.waitForExit() == 0)

        var decoded: [UInt8] = []
        var kinds: [String] = []
        for line in follow.outputLines {
            let record = try ListCommandTests.object(line)
            let kind = try #require(record["kind"] as? String)
            kinds.append(kind)
            guard kind == "data" else { continue }
            #expect(record["offset"] is Int && record["generation"] is Int)
            if let text = record["text"] as? String {
                decoded += Array(text.utf8)
            } else {
                let base64 = try #require(record["bytes"] as? String)
                decoded += Array(try #require(Data(base64Encoded: base64)))
            }
        }
        #expect(decoded == written)
        #expect(kinds.contains("replaced") || kinds.contains("appeared"))
    }

    /// A follower stopped while the directory changes faster than the kernel queues:
    /// whatever rotated through the path then is beyond any event, and the output used to go
    /// on as if nothing had been missed.
    @Test("a kernel queue overflow is marked in the output: an `overflowed` record, and the data before and after it whole",
          arguments: ["inotify", "inotifytools"])
    func overflowIsMarked(backend: String) async throws {
        guard try await FilewatchRobustnessTests.availableBackends().contains(backend),
              let text = try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8),
              let limit = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), limit <= 1_000_000 else { return }
        let tree = try ScratchTree()
        try tree.write("app.log", "line 1\n")
        let follow = try FilewatchProcess(["follow", tree.path("app.log").string, "--from-start", "--format", "json", "--backend", backend])
        try await follow.waitForLine("the first line") { $0.contains(#""text":"line 1\n""#) }
        follow.signal(SIGSTOP)
        // Stopped before the burst: a watch still reading while it begins drains some of it,
        // and the queue never fills (a CI run, inotify).
        try await follow.waitUntilStopped()
        // More events than the queue holds, then a rotation the follower finds by looking.
        for index in 0...(limit + 1_000) { try tree.write(RelativePath("x\(index)")) }
        try tree.rename("app.log", to: "app.log.1")
        try tree.write("app.log", "line 2\n")
        follow.signal(SIGCONT)
        try await follow.waitForLine("the overflow's record") { $0.contains(#""kind":"overflowed""#) }
        try await follow.waitForLine("the new file's line") { $0.contains(#""text":"line 2\n""#) }
        follow.signal(SIGINT)
        #expect(try await follow.waitForExit() == 0)
        let kinds = try follow.outputLines.map { try #require(ListCommandTests.object($0)["kind"] as? String) }
        #expect(kinds.filter { $0 == "overflowed" }.count == 1, "\(kinds)")
        // Generation 1 or 2: the follower's own look may find the new file before the watch
        // reads the overflow.
        #expect(follow.outputLines.contains { $0 == #"{"kind":"overflowed","generation":1}"# || $0 == #"{"kind":"overflowed","generation":2}"# },
                "\(follow.outputLines)")
        #expect(follow.outputLines.filter { $0.contains(#""kind":"data""#) }.count == 2, "\(follow.outputLines)")
    }

    @Test("--lines N starts with the last N lines; the default starts at the end")
    func startingPositions() async throws {
        let tree = try ScratchTree()
        try tree.write("app.log", "a\nb\nc\nd\n")
        let path = tree.path("app.log")
        let last = try FilewatchProcess(["follow", path.string, "--lines", "2", "--backend", "polling", "--poll-interval", "0.05"])
        try await last.waitForLine("the last line") { $0 == "d" }
        last.signal(SIGINT)
        #expect(try await last.waitForExit() == 0)
        #expect(last.outputLines == ["c", "d"])

        let end = try FilewatchProcess(["follow", path.string, "--backend", "polling", "--poll-interval", "0.05"])
        // Nothing is printed for what was there; an append proves the follower runs. It may
        // come before the follower opened the file, so write until it shows up.
        var marker = 0
        while !end.outputLines.contains(where: { $0.hasPrefix("appended") }) {
            marker += 1
            try tree.append("app.log", "appended \(marker)\n")
            _ = try? await end.waitForLine("an appended line", timeout: .seconds(2)) { $0.hasPrefix("appended") }
            if marker > 30 { break }
        }
        end.signal(SIGINT)
        #expect(try await end.waitForExit() == 0)
        #expect(!end.outputLines.contains("a") && !end.outputLines.contains("d"))
        #expect(end.outputLines.contains { $0.hasPrefix("appended") })
    }

    @Test("bad input: one line on stderr, exit 2", arguments: [
        (["follow", "/etc/hostname/app.log"], "not a directory"),
        (["follow", "/tmp/filewatch-follow.log", "--backend", "nonsense"], "--backend"),
        (["follow", "/tmp/filewatch-follow.log", "--from-start", "--lines", "3"], "cannot be combined"),
        (["follow", "/tmp/filewatch-follow.log", "--lines", "-1"], "--lines must be 0 or more (got -1)"),
        (["follow", "/tmp/filewatch-follow.log", "-n", "-1"], "--lines must be 0 or more (got -1)"),
        (["follow", "/tmp/filewatch-follow.log", "--poll-interval", "-1"], "--poll-interval must be a number of seconds"),
        (["follow", "/", "--format", "raw"], "directory"),
        // A name longer than any file system takes: no file will ever be there to follow. (A
        // path longer than PATH_MAX is followed: FilewatchRobustnessTests.rootLongerThanPathMax.)
        (["follow", "/tmp/" + String(repeating: "x", count: 300) + "/app.log"], "NAME_MAX"),
        (["follow", "/tmp/" + String(repeating: "x", count: 300)], "NAME_MAX"),
    ])
    func badInput(arguments: [String], expected: String) async throws {
        try await expectBadInput(arguments, naming: expected)
    }

    /// A loop of symlinks at the path or above it cannot be waited out either (`watch` and
    /// `list` refuse such a root too); before, the follower waited for ever, printing nothing.
    @Test("a loop of symlinks at the path or at its directory: one line on stderr, exit 2")
    func symlinkLoop() async throws {
        let tree = try ScratchTree()
        let loop = tree.root.string + "/loop"
        try #require(symlink("loop", loop) == 0)
        try await expectBadInput(["follow", loop], naming: "loop of symlinks")
        try await expectBadInput(["follow", loop + "/app.log"], naming: "loop of symlinks")
    }

    private func expectBadInput(_ arguments: [String], naming expected: String) async throws {
        let (status, output, error) = try await FilewatchProcess.run(arguments)
        #expect(status == 2)
        #expect(output.isEmpty)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains(expected), "\(error)")
    }
}
