import FileSystemEvents
import FileSystemEventsConformance
import Testing

/// Where each value comes from (code over environment over file), the ranges every key is
/// checked against before any conversion, and the plain sentences for a bad file.
@Suite struct WatchConfigurationTests {
    let roots = [FilePath("/")]

    @Test("code beats the environment, which beats the file; the file fills the rest")
    func precedence() async throws {
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"filewatch": {"backend": "inotify", "latency": 3, "pollInterval": 4, "bufferLimit": 500, "depth": 7, "ignoreEditorFiles": true}}"#, in: .outside)
        let file = tree.path("config.json", in: .outside)
        var overrides = WatchConfiguration.Overrides()
        overrides.latency = .seconds(1)
        let configuration = try await WatchConfiguration.load(
            roots: roots, overrides: overrides, configFile: file,
            environment: ["FILEWATCH_LATENCY": "2", "FILEWATCH_POLL_INTERVAL": "0.5", "FILEWATCH_DEPTH": "2"]
        )
        #expect(configuration.options.latency == .seconds(1))          // code
        #expect(configuration.options.pollInterval == .milliseconds(500))  // environment over file
        #expect(configuration.options.filter.maximumDepth == 2)         // environment over file
        #expect(configuration.backend == .inotify)                      // file only
        #expect(configuration.options.bufferLimit == 500)               // file only
        #expect(configuration.options.filter.ignoresEditorFiles)        // file only
    }

    /// `list --live --backend polling` asked its configured source for the first scan's tree
    /// and got none: the merge of the listing's options into the configuration's dropped the
    /// request, so the listing read the disk a moment after the first scan and replayed that
    /// scan's differences over it, losing renamed directories' children for good.
    @Test("a feature that asks for the source's first tree gets it from a configured source")
    func featureGetsTheFirstTree() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("a", "a")
        let configuration = try await WatchConfiguration.load(roots: [tree.root], environment: ["FILEWATCH_BACKEND": "polling"])
        var feature = WatchOptions(roots: [tree.root])
        feature.capturesInitialState = true
        let stream = try configuration.makeSource(watching: feature).updates()
        var updates = stream.makeAsyncIterator()
        while let update = try await updates.next() {
            if case .ready = update { break }
        }
        let firstTree = stream.initialState?.first
        await stream.stop()
        #expect(firstTree?.recordsAttributes == true)
        #expect(firstTree?.rootSnapshot.tree?.entries.count == 1)
    }

    @Test("nothing set: the defaults")
    func defaults() async throws {
        let configuration = try await WatchConfiguration.load(roots: roots, environment: [:])
        #expect(configuration.backend == .auto)
        #expect(configuration.options.latency == .zero)
        #expect(configuration.options.pollInterval == .seconds(1))
        #expect(configuration.options.bufferLimit == WatchOptions.defaultBufferLimit)
        #expect(configuration.options.filter.maximumDepth == nil)
        #expect(!configuration.options.filter.ignoresEditorFiles)
    }

    @Test("values past a duration's range name the key and the range, and never trap", arguments: [
        ("FILEWATCH_LATENCY", "1e10", "filewatch.latency", "from 0 to 86400"),
        ("FILEWATCH_LATENCY", "-1", "filewatch.latency", "from 0 to 86400"),
        ("FILEWATCH_LATENCY", "nan", "filewatch.latency", "from 0 to 86400"),
        ("FILEWATCH_POLL_INTERVAL", "1e11", "filewatch.pollInterval", "from 0.001 to 86400"),
        ("FILEWATCH_POLL_INTERVAL", "0", "filewatch.pollInterval", "from 0.001 to 86400"),
        ("FILEWATCH_POLL_INTERVAL", "1e-9", "filewatch.pollInterval", "from 0.001 to 86400"),
        ("FILEWATCH_DEPTH", "-3", "filewatch.depth", "from 0 to"),
        ("FILEWATCH_BUFFER_LIMIT", "0", "filewatch.bufferLimit", "above 0"),
    ])
    func outOfRange(variable: String, value: String, key: String, range: String) async throws {
        let error = await #expect(throws: FileSystemEventsError.self) {
            _ = try await WatchConfiguration.load(roots: roots, environment: [variable: value])
        }
        let message = error?.description ?? ""
        #expect(message.contains(key) && message.contains(variable), "\(message)")
        #expect(message.contains(range), "\(message)")
    }

    /// A value is named as it was given: a user who wrote `"latency": -1` in a file looks for
    /// that file and that member, not for `FILEWATCH_LATENCY`, which the message named alone.
    @Test("a bad value names where it was given: the environment variable, or the member and the file")
    func badValueNamesItsSource() async throws {
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"filewatch": {"latency": -1, "backend": "bogus"}}"#, in: .outside)
        let file = tree.path("config.json", in: .outside)
        func message(environment: [String: String]) async -> String {
            let error = await #expect(throws: FileSystemEventsError.self) {
                _ = try await WatchConfiguration.load(roots: roots, configFile: file, environment: environment)
            }
            return error?.description ?? ""
        }
        let fromFile = await message(environment: [:])
        #expect(fromFile.contains("filewatch.backend") && fromFile.contains(#""backend" in \#(file)"#), "\(fromFile)")
        #expect(!fromFile.contains("FILEWATCH_BACKEND"), "\(fromFile)")
        let fromEnvironment = await message(environment: ["FILEWATCH_BACKEND": "inotify", "FILEWATCH_LATENCY": "-2"])
        #expect(fromEnvironment.contains("environment variable FILEWATCH_LATENCY") && fromEnvironment.contains("-2"), "\(fromEnvironment)")
        #expect(!fromEnvironment.contains("config.json"), "\(fromEnvironment)")
    }

    @Test("a huge value set in code is checked the same way")
    func hugeOverride() async throws {
        var overrides = WatchConfiguration.Overrides()
        overrides.pollInterval = .seconds(Int64.max)
        let error = await #expect(throws: FileSystemEventsError.self) {
            _ = try await WatchConfiguration.load(roots: roots, overrides: overrides, environment: [:])
        }
        #expect(error?.description.contains("filewatch.pollInterval") == true)
    }

    @Test("a misspelt key in the configuration file names the key and the known ones")
    func unknownKeyInFile() async throws {
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"filewatch": {"bakend": "polling"}}"#, in: .outside)
        let error = await #expect(throws: FileSystemEventsError.self) {
            _ = try await WatchConfiguration.load(roots: roots, configFile: tree.path("config.json", in: .outside), environment: [:])
        }
        let message = error?.description ?? ""
        #expect(message.contains("filewatch.bakend") && message.contains("backend, latency"), "\(message)")
    }

    @Test("a list that is not of strings in the configuration file names the key (it was read as no setting at all)")
    func listOfNumbersInFile() async throws {
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"filewatch": {"exclude": [1]}}"#, in: .outside)
        let error = await #expect(throws: FileSystemEventsError.self) {
            _ = try await WatchConfiguration.load(roots: roots, configFile: tree.path("config.json", in: .outside), environment: [:])
        }
        let message = error?.description ?? ""
        #expect(message.contains("exclude") && message.contains("a list of strings"), "\(message)")
    }

    @Test("a name repeated outside the filewatch settings, or inside a value, is no error")
    func repeatedElsewhere() async throws {
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"other": {"a": 1, "a": 2}, "filewatch": {"include": ["{latency}", "latency", "a\"b"], "latency": 1}, "more": [{"filewatch": 1}]}"#, in: .outside)
        let configuration = try await WatchConfiguration.load(roots: roots, configFile: tree.path("config.json", in: .outside), environment: [:])
        #expect(configuration.options.latency == .seconds(1))
        #expect(configuration.options.filter.include.count == 3)
    }

    @Test("a bad configuration file is one plain sentence naming the file and the problem", arguments: [
        ("directory", "is a directory"),
        ("missing", "does not exist"),
        ("malformed", "not valid JSON"),
        ("array", "not a JSON object"),
        ("scalarScope", "\"filewatch\" member is not an object"),
        ("topLevel", "settings go inside a \"filewatch\" member"),
        ("topLevelBeside", "settings go inside a \"filewatch\" member"),
        ("repeatedKey", "\"latency\" in \"filewatch\" appears twice"),
        ("repeatedScope", "\"filewatch\" appears twice"),
    ])
    func badFile(kind: String, problem: String) async throws {
        let tree = try ScratchTree()
        let file: FilePath
        switch kind {
        case "directory":
            try tree.makeDirectory("config.json", in: .outside)
            file = tree.path("config.json", in: .outside)
        case "missing":
            file = tree.path("absent.json", in: .outside)
        case "malformed":
            try tree.write("config.json", #"{"filewatch": {"backend": "#, in: .outside)
            file = tree.path("config.json", in: .outside)
        case "array":
            try tree.write("config.json", "[1, 2]", in: .outside)
            file = tree.path("config.json", in: .outside)
        case "topLevel":
            try tree.write("config.json", #"{"backend": "polling"}"#, in: .outside)
            file = tree.path("config.json", in: .outside)
        case "topLevelBeside":
            // Beside a "filewatch" member it was read as nothing at all.
            try tree.write("config.json", #"{"filewatch": {}, "latency": 1}"#, in: .outside)
            file = tree.path("config.json", in: .outside)
        case "repeatedKey":
            // JSON allows it, and the decoder kept one of the two: which one, the user could
            // not tell. Keys of other members, and names inside values, may repeat.
            try tree.write("config.json", #"{"other": {"latency": 1, "latency": 2}, "filewatch": {"include": ["{latency}", "a,b"], "depth": 3, "latency": 0.1, "latency": 2}}"#, in: .outside)
            file = tree.path("config.json", in: .outside)
        case "repeatedScope":
            try tree.write("config.json", #"{"filewatch": {"latency": 1}, "other": [{"filewatch": 1}, {"filewatch": 2}], "filewatch": {"depth": 2}}"#, in: .outside)
            file = tree.path("config.json", in: .outside)
        default:
            try tree.write("config.json", #"{"filewatch": 5}"#, in: .outside)
            file = tree.path("config.json", in: .outside)
        }
        let error = await #expect(throws: FileSystemEventsError.self) {
            _ = try await WatchConfiguration.load(roots: roots, configFile: file, environment: [:])
        }
        let message = error?.description ?? ""
        #expect(message.contains(file.string), "\(message)")
        #expect(message.contains(problem), "\(message)")
        #expect(!message.contains("NSCocoaErrorDomain") && !message.contains("Error Domain") && !message.contains("\n"), "\(message)")
    }
}
