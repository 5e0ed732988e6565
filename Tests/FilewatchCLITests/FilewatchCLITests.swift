import FileSystemEventsConformance
import Foundation
import Testing

/// The `filewatch` binary end to end: its exit codes, its one-line errors, and the JSON Lines
/// contract of docs/cli-json.md, checked by parsing the output as a script would.
@Suite(.serialized)
struct FilewatchCLITests {
    // MARK: Bad input: one line on stderr, exit status 2, before anything is watched

    @Test("a root that does not exist")
    func missingRoot() async throws {
        let (status, output, error) = try await FilewatchProcess.run(["watch", "/nonexistent/filewatch-test"])
        #expect(status == 2)
        #expect(output.isEmpty)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains("does not exist"))
    }

    @Test("a root whose path holds a newline is still named on one line, which no name can forge")
    func missingRootWithNewline() async throws {
        let (status, output, error) = try await FilewatchProcess.run(["watch", "/nonexistent\nfilewatch: error: forged"])
        #expect(status == 2)
        #expect(output.isEmpty)
        #expect(error.split(separator: "\n").count == 1, "\(error)")
        #expect(error.contains("/nonexistent\\nfilewatch: error: forged"), "\(error)")
    }

    @Test("an unknown backend names the known ones")
    func unknownBackend() async throws {
        let tree = try ScratchTree()
        let (status, _, error) = try await FilewatchProcess.run(["watch", "--backend", "nonsense", tree.root.string])
        #expect(status == 2)
        #expect(error.split(separator: "\n").count == 1)
        // The flag the user typed, not the configuration key it ends up in.
        #expect(error.contains("--backend"), "\(error)")
        #expect(!error.contains("FILEWATCH_BACKEND"), "\(error)")
        #expect(error.contains("polling"))
        // From the environment, the key.
        let (fromEnvironment, _, environmentError) = try await FilewatchProcess.run(
            ["watch", tree.root.string], environment: ["FILEWATCH_BACKEND": "nonsense"])
        #expect(fromEnvironment == 2)
        #expect(environmentError.contains("FILEWATCH_BACKEND"), "\(environmentError)")
    }

    @Test("a root whose name is not valid UTF-8 is watched by its exact bytes, and ready gives them")
    func nonUTF8Root() async throws {
        let tree = try ScratchTree()
        var name = Array(tree.root.string.utf8) + Array("/r".utf8) + [0xFF] + Array("oot".utf8)
        let directory = name
        name.append(0)
        let made = name.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, 0o755) } }
        try #require(made == 0, "mkdir of a name with byte 0xFF failed: \(errno)")
        // A second name that differs only in its invalid byte: decoded with U+FFFD, the two were
        // one argument.
        var twin = Array(tree.root.string.utf8) + Array("/r".utf8) + [0xFE] + Array("oot".utf8)
        let twinDirectory = twin
        twin.append(0)
        let madeTwin = twin.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, 0o755) } }
        try #require(madeTwin == 0)
        let watcher = try FilewatchProcess(
            ["watch", "\"$(printf '%s/r\\377oot' '\(tree.root.string)')\"", "\"$(printf '%s/r\\376oot' '\(tree.root.string)')\"", "--format", "json"],
            shellWords: true)
        let ready = try await watcher.waitForLine("ready") { $0.contains("\"kind\":\"ready\"") }
        let expected = Data(directory).base64EncodedString()
        let expectedTwin = Data(twinDirectory).base64EncodedString()
        #expect(ready.contains("\"rootsBytes\":[\"\(expected)\",\"\(expectedTwin)\"]"), "\(ready)")
        var file = directory + Array("/inside.txt".utf8)
        file.append(0)
        let fd = file.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) } }
        try #require(fd >= 0)
        close(fd)
        let created = try await watcher.waitForLine("the file created inside") { $0.contains("\"kind\":\"created\"") }
        #expect(created.contains(Data(directory + Array("/inside.txt".utf8)).base64EncodedString()), "\(created)")
        watcher.signal(SIGINT)
        #expect(try await watcher.waitForExit() == 0)
    }

    @Test("an --include glob that is not valid UTF-8 matches names by their exact bytes")
    func nonUTF8IncludeGlob() async throws {
        let tree = try ScratchTree()
        let watcher = try FilewatchProcess(
            ["watch", "--include", "\"$(printf 'caf\\351*')\"", "--format", "json", tree.root.string], shellWords: true)
        _ = try await watcher.waitForLine("ready") { $0.contains("\"kind\":\"ready\"") }
        func make(_ name: [UInt8]) throws {
            var path = Array(tree.root.string.utf8) + Array("/".utf8) + name
            path.append(0)
            let fd = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) } }
            try #require(fd >= 0)
            close(fd)
        }
        // The same name with U+FFFD where the byte was, which a pattern decoded the standard
        // library's way would match: made first, so that it would be reported first. (Before,
        // the pattern kept the CLI's private-use stand-in for the byte and matched neither.)
        try make(Array("caf\u{FFFD}-decoded.txt".utf8))
        try make(Array("caf".utf8) + [0xE9] + Array("-latin1.txt".utf8))
        let created = try await watcher.waitForLine("the Latin-1 name created") { $0.contains("\"kind\":\"created\"") }
        #expect(created.contains(Data(Array(tree.root.string.utf8) + Array("/caf".utf8) + [0xE9] + Array("-latin1.txt".utf8)).base64EncodedString()),
                "\(created)")
        watcher.signal(SIGINT)
        #expect(try await watcher.waitForExit() == 0)
    }

    @Test("a bad environment value names its key")
    func badEnvironmentValue() async throws {
        let tree = try ScratchTree()
        let (status, _, error) = try await FilewatchProcess.run(["watch", tree.root.string], environment: ["FILEWATCH_POLL_INTERVAL": "soon"])
        #expect(status == 2)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains("FILEWATCH_POLL_INTERVAL"))
    }

    @Test("a bad value in the configuration file names its key")
    func badConfigurationValue() async throws {
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"filewatch": {"latency": "later"}}"#, in: .outside)
        let (status, _, error) = try await FilewatchProcess.run(["watch", "--config", tree.path("config.json", in: .outside).string, tree.root.string])
        #expect(status == 2)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains("filewatch.latency"))
    }

    @Test("an unreadable configuration file")
    func unreadableConfigurationFile() async throws {
        let tree = try ScratchTree()
        let (status, _, error) = try await FilewatchProcess.run(["watch", "--config", tree.path("absent.json", in: .outside).string, tree.root.string])
        #expect(status == 2)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains("configuration file"))
    }

    @Test("a negative latency")
    func badFlag() async throws {
        let tree = try ScratchTree()
        let (status, _, error) = try await FilewatchProcess.run(["watch", "--latency=-2", tree.root.string])
        #expect(status == 2)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains("--latency"))
    }

    @Test("an unavailable backend says which trait and package enable it")
    func unavailableBackend() async throws {
        let (status, lines, _) = try await FilewatchProcess.run(["backends", "--format", "json"])
        #expect(status == 0)
        let backends = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        #expect(backends.compactMap { $0["name"] as? String } == ["auto", "polling", "inotify", "inotifytools"])
        for backend in backends where backend["available"] as? Bool == false {
            #expect((backend["remedy"] as? String)?.isEmpty == false, "no remedy for \(backend)")
        }
        if let tools = backends.first(where: { $0["name"] as? String == "inotifytools" }), tools["available"] as? Bool == false {
            let tree = try ScratchTree()
            let (watchStatus, _, error) = try await FilewatchProcess.run(["watch", "--backend", "inotifytools", tree.root.string])
            #expect(watchStatus == 2)
            #expect(error.contains("InotifyTools") && error.contains("libinotifytools0-dev"))
        }
    }

    // MARK: The JSON Lines contract

    @Test("JSON Lines: ready, events, lossless paths, SIGINT exits 0", arguments: ["polling", "auto"])
    func jsonLines(backend: String) async throws {
        let tree = try ScratchTree()
        try tree.write("existing.txt", "before")
        let watch = try FilewatchProcess(["watch", tree.root.string, "--format", "json", "--backend", backend, "--poll-interval", "0.05"])
        let readyLine = try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        let ready = try object(readyLine)
        #expect(ready["backend"] as? String != nil && ready["backend"] as? String != "auto")
        #expect(ready["roots"] as? [String] == [tree.root.string])

        try tree.write("new.txt", "hello")
        try tree.rename("existing.txt", to: "renamed.txt")
        let odd = RelativePath(bytes: Array("bad".utf8) + [0xFF, 0xFE])
        try tree.write(odd, "x")
        try await watch.waitForLine("the odd name") { $0.contains("pathBytes") }
        try await watch.waitForLine("new.txt") { $0.contains("new.txt") }
        try await watch.waitForLine("the rename") { $0.contains(#""kind":"renamed""#) }
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)

        let records = try watch.outputLines.map(object)
        #expect(records.first?["kind"] as? String == "ready")
        for record in records.dropFirst() {
            #expect(record["time"] is String)
            #expect(["created", "removed", "modified", "attributesChanged", "renamed", "overflow", "rootRemoved"].contains(record["kind"] as? String ?? ""))
            #expect(["file", "directory", "symlink", "other", "unknown"].contains(record["type"] as? String ?? ""))
        }
        let created = try #require(records.first { $0["kind"] as? String == "created" && ($0["path"] as? String)?.hasSuffix("/new.txt") == true })
        #expect(created["path"] as? String == tree.path("new.txt").string)
        let renamed = try #require(records.first { $0["kind"] as? String == "renamed" })
        #expect(renamed["previousPath"] as? String == tree.path("existing.txt").string)
        #expect(renamed["path"] as? String == tree.path("renamed.txt").string)
        let oddRecord = try #require(records.first { $0["pathBytes"] != nil })
        let decoded = try #require(Data(base64Encoded: oddRecord["pathBytes"] as? String ?? ""))
        #expect(Array(decoded) == Array(tree.root.string.utf8) + [UInt8(ascii: "/")] + odd.bytes)
    }

    @Test("--settle: a copied-in file is reported settled once, after its writer closed it", arguments: ["polling", "inotify"])
    func settle(backend: String) async throws {
        let tree = try ScratchTree()
        let watch = try FilewatchProcess(["watch", tree.root.string, "--format", "json", "--backend", backend,
                                          "--poll-interval", "0.05", "--settle", "0.1"])
        try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        let uploadStarted = ContinuousClock.now
        try tree.write("upload.part", String(repeating: "u", count: 100_000))
        try tree.rename("upload.part", to: "upload.bin")
        // Stalled for the quiet period before the rename, the temporary name was rightly settled.
        let stalled = ContinuousClock.now - uploadStarted >= .milliseconds(100)
        try await watch.waitForLine("settled upload.bin") { $0.contains(#""kind":"settled""#) && $0.contains("upload.bin") }
        try tree.write("marker.txt", "m")
        try await watch.waitForLine("settled marker.txt") { $0.contains(#""kind":"settled""#) && $0.contains("marker.txt") }
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)
        let records = try watch.outputLines.map(object)
        let settled = records.filter { $0["kind"] as? String == "settled" }
        #expect(settled.filter { ($0["path"] as? String)?.hasSuffix("/upload.bin") == true }.count == 1)
        #expect(stalled || !settled.contains { ($0["path"] as? String)?.hasSuffix(".part") == true })
        #expect(settled.allSatisfy { $0["type"] as? String == "file" })
    }

    @Test("--settle with --only settled: the backlog, then each finished file, one line each and nothing else", arguments: ["polling", "inotify"])
    func settledOnly(backend: String) async throws {
        let tree = try ScratchTree()
        try tree.write("backlog.pdf", "already here")
        let watch = try FilewatchProcess(["watch", tree.root.string, "--format", "json", "--backend", backend,
                                          "--poll-interval", "0.05", "--settle", "0.1", "--only", "settled"])
        try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        try await watch.waitForLine("settled backlog.pdf") { $0.contains(#""kind":"settled""#) && $0.contains("backlog.pdf") }
        try tree.makeDirectory("batch")
        let scanStarted = ContinuousClock.now
        try tree.write("batch/scan.part", String(repeating: "s", count: 50_000))
        try tree.rename("batch/scan.part", to: "batch/scan.pdf")
        let stalled = ContinuousClock.now - scanStarted >= .milliseconds(100)
        try await watch.waitForLine("settled scan.pdf") { $0.contains(#""kind":"settled""#) && $0.contains("scan.pdf") }
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)
        // Stalled for the quiet period before the rename, scan.part was rightly settled too.
        let kinds = try watch.outputLines.map(object)
            .filter { !(stalled && ($0["path"] as? String)?.hasSuffix("/scan.part") == true) }
            .map { $0["kind"] as? String ?? "" }
        #expect(kinds == ["ready", "settled", "settled"], "\(watch.outputLines)")
    }

    @Test("--only with an unknown kind, or --only settled without a quiet period, is one line naming the fix")
    func onlyErrors() async throws {
        let tree = try ScratchTree()
        let (status, _, error) = try await FilewatchProcess.run(["watch", "--only", "created,finished", tree.root.string])
        #expect(status == 2)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains("--only") && error.contains("finished") && error.contains("settled"), "\(error)")
        let (status2, _, error2) = try await FilewatchProcess.run(["watch", "--only", "settled", tree.root.string])
        #expect(status2 != 0)
        #expect(error2.split(separator: "\n").count == 1)
        #expect(error2.contains("--settle"), "\(error2)")
    }

    @Test("--settle out of range names the flag")
    func settleOutOfRange() async throws {
        let tree = try ScratchTree()
        let (status, _, error) = try await FilewatchProcess.run(["watch", "--settle=-1", tree.root.string])
        #expect(status == 2)
        #expect(error.split(separator: "\n").count == 1)
        #expect(error.contains("--settle"))
    }

    @Test("nested roots are one watch: each change is printed once, and ready names every root", arguments: ["polling", "inotify"])
    func nestedRoots(backend: String) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("inner")
        let inner = tree.path("inner")
        let watch = try FilewatchProcess(["watch", tree.root.string, inner.string, inner.string + "/", "--format", "json",
                                          "--backend", backend, "--poll-interval", "0.05"])
        let ready = try object(try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) })
        #expect(ready["backend"] as? String == backend)
        #expect((ready["roots"] as? [String])?.count == 3)
        try tree.write("inner/file.txt", "x")
        try tree.write("outer.txt", "y")
        try tree.write("inner/marker", "")
        try await watch.waitForLine("the outer file") { $0.contains("outer.txt") }
        try await watch.waitForLine("the marker") { $0.contains("inner/marker") }
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)
        let records = try watch.outputLines.map(object)
        let created = records.filter { $0["kind"] as? String == "created" }.compactMap { $0["path"] as? String }
        #expect(created.sorted() == [tree.path("inner/file.txt").string, tree.path("inner/marker").string, tree.path("outer.txt").string],
                "\(backend): \(created)")
    }

    @Test("SIGTERM flushes what is pending before exiting 0")
    func sigtermFlushes() async throws {
        let tree = try ScratchTree()
        // A latency window and a poll interval far longer than the test: only the flush on
        // SIGTERM can make the change appear.
        let watch = try FilewatchProcess(["watch", tree.root.string, "--format", "json", "--backend", "polling",
                                          "--poll-interval", "3600", "--latency", "3600"])
        try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        try tree.write("pending.txt", "p")
        watch.signal(SIGTERM)
        #expect(try await watch.waitForExit() == 0)
        #expect(watch.outputLines.contains { $0.contains("pending.txt") && $0.contains(#""kind":"created""#) })
    }

    @Test("text output: aligned columns, relative paths, one line per event")
    func textOutput() async throws {
        let tree = try ScratchTree()
        let watch = try FilewatchProcess(["watch", "--backend", "polling", "--poll-interval", "0.05", "."], directory: URL(fileURLWithPath: tree.root.string))
        try await watch.waitForLine("the ready line") { $0.contains("ready") }
        try tree.write("line\nbreak.txt", "x")
        let line = try await watch.waitForLine("the created line") { $0.contains("created") }
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)
        #expect(line.hasPrefix("+"))
        #expect(line.contains("line\\nbreak.txt"))
        #expect(!line.contains(tree.root.string))
    }

    @Test("the stream ends with exit status 0 when the root is removed")
    func rootRemoved() async throws {
        let tree = try ScratchTree()
        let watch = try FilewatchProcess(["watch", tree.root.string, "--format", "json", "--backend", "polling", "--poll-interval", "0.05"])
        try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        try tree.removeTree(.root)
        try await watch.waitForLine("rootRemoved") { $0.contains(#""kind":"rootRemoved""#) }
        #expect(try await watch.waitForExit() == 0)
    }

    @Test("--wait-for-roots: a missing root is reported created with its contents, removed, then created again; the watch goes on", arguments: ["polling", "inotify"])
    func waitForRoots(backend: String) async throws {
        let tree = try ScratchTree()
        let root = tree.path("not/yet/here")
        let watch = try FilewatchProcess(["watch", root.string, "--wait-for-roots", "--format", "json", "--backend", backend, "--poll-interval", "0.05"])
        try await watch.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        try tree.makeDirectories("not/yet/here/inner")
        try tree.write("not/yet/here/inner/file.txt", "x")
        try await watch.waitForLine("the file's creation") { $0.contains(#""kind":"created""#) && $0.contains("inner/file.txt") }
        #expect(watch.outputLines.contains { $0.contains(#""kind":"created""#) && $0.contains(#""path":"\#(root.string)""#) })
        try tree.removeTree("not")
        try await watch.waitForLine("the root's removal") { $0.contains(#""kind":"removed""#) && $0.contains(#""path":"\#(root.string)""#) }
        try tree.makeDirectories("not/yet/here")
        try tree.write("not/yet/here/again.txt", "y")
        try await watch.waitForLine("the new file") { $0.contains(#""kind":"created""#) && $0.contains("again.txt") }
        #expect(!watch.outputLines.contains { $0.contains("rootRemoved") })
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)

        // SIGINT while still waiting (nothing but an ancestor watched) ends it too.
        let waiting = try FilewatchProcess(["watch", tree.path("never/made").string, "--wait-for-roots", "--format", "json", "--backend", backend])
        try await waiting.waitForLine("the ready line") { $0.contains(#""kind":"ready""#) }
        waiting.signal(SIGINT)
        #expect(try await waiting.waitForExit(timeout: .seconds(20)) == 0)
    }

    private func object(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw CLITestFailure("not a JSON object: \(line)")
        }
        return object
    }
}
