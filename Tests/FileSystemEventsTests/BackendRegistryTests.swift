import FileSystemEvents
import FileSystemEventsConformance
import DigestPollingBackend
import Foundation
import Testing

/// `FileSystemEventBackendRegistry`: a backend registered by the host is selected by name from
/// configuration like a built-in one, and runs end to end; `auto` follows a preference order;
/// clashing names and unknown names are typed errors that list what is known.
@Suite(.serialized) struct BackendRegistryTests {
    /// The example third-party backend (Sources/Examples/DigestPollingBackend), which is
    /// written against the public API only and passes the whole conformance suite.
    static let example = DigestPollingEventSource.registration

    /// A factory for registrations whose source is never started.
    static func exampleSource(_ options: WatchOptions) -> any FileSystemEventSource {
        DigestPollingEventSource(options: options)
    }

    @Test("a registered backend is chosen by FILEWATCH_BACKEND, reports events, and is listed among the known names")
    func selectedByConfiguration() async throws {
        let registry = FileSystemEventBackendRegistry.shared
        try registry.register(Self.example)
        defer { registry.unregister(name: "digest-polling") }
        let tree = try ScratchTree()
        let configuration = try await WatchConfiguration.load(
            roots: [tree.root], environment: ["FILEWATCH_BACKEND": "Digest-Polling", "FILEWATCH_POLL_INTERVAL": "0.02"])
        #expect(configuration.backendName == "digest-polling")
        let source = try configuration.makeSource()
        #expect(source.backendName == "digest-polling")
        let observed = try await observe(source.updates(), onReady: { try tree.write("hello.txt", "x") }, untilEvent: { $0.kind == .created && $0.path.lastComponent?.string == "hello.txt" })
        #expect(!observed.events.isEmpty)
        #expect(registry.knownNames.contains("digest-polling"))

        // The package's own layers apply to it too.
        var waiting = WatchOptions(roots: [tree.path("later")])
        waiting.waitsForMissingRoots = true
        waiting.pollInterval = .milliseconds(20)
        let layered = try Self.example.makeSource(options: waiting)
        #expect(layered.backendName == "digest-polling")
        _ = try await observe(layered.updates(), onReady: {
            try tree.makeDirectory("later")
            try tree.write("later/inside.txt", "y")
        }, untilEvent: { $0.path.lastComponent?.string == "inside.txt" })
    }

    @Test("a registered backend is chosen by the JSON configuration file and by an override (a host's --backend), in any case")
    func selectedByFileAndOverride() async throws {
        let registry = FileSystemEventBackendRegistry.shared
        try registry.register(Self.example)
        defer { registry.unregister(name: "digest-polling") }
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"filewatch": {"backend": "digest-polling", "pollInterval": 0.02}}"#, in: .outside)
        let fromFile = try await WatchConfiguration.load(roots: [tree.root], configFile: tree.path("config.json", in: .outside), environment: [:])
        #expect(fromFile.backendName == "digest-polling")
        let source = try fromFile.makeSource()
        #expect(source.backendName == "digest-polling")
        _ = try await observe(source.updates(), onReady: { try tree.write("from-file.txt", "x") }, untilEvent: { $0.path.lastComponent?.string == "from-file.txt" })
        var overrides = WatchConfiguration.Overrides()
        overrides.backend = "DIGEST-polling"
        // The override wins over the environment, which wins over the file.
        let overridden = try await WatchConfiguration.load(roots: [tree.root], overrides: overrides,
                                                           configFile: tree.path("config.json", in: .outside),
                                                           environment: ["FILEWATCH_BACKEND": "polling"])
        #expect(overridden.backendName == "digest-polling")
        let fromEnvironment = try await WatchConfiguration.load(roots: [tree.root], configFile: tree.path("config.json", in: .outside),
                                                                environment: ["FILEWATCH_BACKEND": "polling"])
        #expect(fromEnvironment.backendName == "polling")
    }

    @Test("a clashing name is a typed error; an unknown name lists built-in and registered names")
    func namesAreChecked() async throws {
        let registry = FileSystemEventBackendRegistry.shared
        #expect(throws: FileSystemEventsError.backendNameTaken("inotify")) {
            try registry.register(RegisteredBackend(name: "inotify", summary: "") { options in Self.exampleSource(options) })
        }
        try registry.register(Self.example)
        defer { registry.unregister(name: "digest-polling") }
        #expect(throws: FileSystemEventsError.backendNameTaken("DIGEST-POLLING")) {
            try registry.register(RegisteredBackend(name: "DIGEST-POLLING", summary: "") { options in Self.exampleSource(options) })
        }
        do {
            _ = try await WatchConfiguration.load(roots: ["/tmp"], environment: ["FILEWATCH_BACKEND": "nosuch"])
            Issue.record("an unknown backend was accepted")
        } catch {
            #expect(error.description.contains("digest-polling") && error.description.contains("inotify"), "\(error)")
        }
        #expect(throws: FileSystemEventsError.self) { try FileSystemEventBackend(name: "nosuch") }
    }

    @Test("auto follows the registry's preference order, skipping what is unavailable")
    func autoPreference() throws {
        let registry = FileSystemEventBackendRegistry.shared
        try registry.register(Self.example)
        try registry.register(RegisteredBackend(name: "never-here", summary: "", availability: {
            .unavailable(reason: "not on this machine", remedy: "none")
        }) { options in Self.exampleSource(options) })
        defer {
            registry.unregister(name: "digest-polling")
            registry.unregister(name: "never-here")
            registry.autoPreference = nil
        }
        let tree = try ScratchTree()
        registry.autoPreference = ["never-here", "digest-polling", "inotify"]
        #expect(try FileSystemEventBackend.auto.makeSource(options: WatchOptions(roots: [tree.root])).backendName == "digest-polling")
        #expect(FileSystemEventBackend.autoChoice(for: [tree.root]) == "digest-polling", "what `filewatch backends` shows for auto")
        registry.autoPreference = ["polling"]
        #expect(try FileSystemEventBackend.auto.makeSource(options: WatchOptions(roots: [tree.root])).backendName == "polling")
        registry.autoPreference = nil
        #expect(try FileSystemEventBackend.auto.makeSource(options: WatchOptions(roots: [tree.root])).backendName != "digest-polling")
        #expect(FileSystemEventBackend.autoChoice(for: [tree.root]) == FileSystemEventBackend.auto.resolved(for: [tree.root]).rawValue)
    }
}
