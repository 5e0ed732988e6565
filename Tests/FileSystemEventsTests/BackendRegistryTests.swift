import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Testing

/// `FileSystemEventBackendRegistry`: a backend registered by the host is selected by name from
/// configuration like a built-in one, and runs end to end; `auto` follows a preference order;
/// clashing names and unknown names are typed errors that list what is known.
@Suite(.serialized) struct BackendRegistryTests {
    /// A third-party backend as a host would write one: here it watches through a snapshot
    /// poll of its own, built on the public `FileSystemEventStream` and `FileTreeSnapshot` API.
    struct SnapshotPollingSource: FileSystemEventSource {
        let options: WatchOptions
        var backendName: String { "snapshot-poll" }
        var capabilities: FileSystemEventSourceCapabilities {
            FileSystemEventSourceCapabilities(isEventDriven: false, pairsRenames: true, needsPollInterval: true, canOverflow: false,
                                              usesPerDirectoryWatches: false, seesRemoteChanges: true)
        }

        func updates() -> FileSystemEventStream {
            let options = self.options
            return FileSystemEventStream(options: options) { channel in
                _ = channel.send(.scanStarted(roots: options.roots))
                var snapshots: [FileTreeSnapshot] = []
                for root in options.roots {
                    do throws(FileSystemEventsError) {
                        snapshots.append(try FileTreeSnapshot.scan(root, isRecursive: options.isRecursive, filter: options.filter))
                    } catch {
                        channel.finish(throwing: error)
                        return
                    }
                }
                _ = channel.send(.ready(roots: options.roots))
                while !channel.isTerminated && !channel.isFinishRequested {
                    usleep(UInt32(options.pollInterval.components.attoseconds / 1_000_000_000_000) + UInt32(options.pollInterval.components.seconds) * 1_000_000)
                    for (index, old) in snapshots.enumerated() {
                        guard let new = try? FileTreeSnapshot.scan(options.roots[index], isRecursive: options.isRecursive, filter: options.filter) else { continue }
                        let events = FileTreeSnapshot.events(from: old, to: new)
                        if !events.isEmpty, case .terminated = channel.send(.events(events)) { return }
                        snapshots[index] = new
                    }
                }
                channel.finish()
            }
        }
    }

    static let example = RegisteredBackend(name: "snapshot-poll", summary: "an example third-party backend: snapshots diffed every poll interval") { options in
        SnapshotPollingSource(options: options)
    }

    @Test("a registered backend is chosen by FILEWATCH_BACKEND, reports events, and is listed among the known names")
    func selectedByConfiguration() async throws {
        let registry = FileSystemEventBackendRegistry.shared
        try registry.register(Self.example)
        defer { registry.unregister(name: "snapshot-poll") }
        let tree = try ScratchTree()
        let configuration = try await WatchConfiguration.load(
            roots: [tree.root], environment: ["FILEWATCH_BACKEND": "Snapshot-Poll", "FILEWATCH_POLL_INTERVAL": "0.02"])
        #expect(configuration.backendName == "snapshot-poll")
        let source = try configuration.makeSource()
        #expect(source.backendName == "snapshot-poll")
        let observed = try await observe(source.updates(), onReady: { try tree.write("hello.txt", "x") }, until: { observed in
            observed.events.contains { $0.kind == .created && $0.path.lastComponent?.string == "hello.txt" }
        })
        #expect(!observed.events.isEmpty)
        #expect(registry.knownNames.contains("snapshot-poll"))

        // The package's own layers apply to it too.
        var waiting = WatchOptions(roots: [tree.path("later")])
        waiting.waitsForMissingRoots = true
        waiting.pollInterval = .milliseconds(20)
        let layered = try Self.example.makeSource(options: waiting)
        #expect(layered.backendName == "snapshot-poll")
        _ = try await observe(layered.updates(), onReady: {
            try tree.makeDirectory("later")
            try tree.write("later/inside.txt", "y")
        }, until: { observed in
            observed.events.contains { $0.path.lastComponent?.string == "inside.txt" }
        })
    }

    @Test("a registered backend is chosen by the JSON configuration file and by an override (a host's --backend), in any case")
    func selectedByFileAndOverride() async throws {
        let registry = FileSystemEventBackendRegistry.shared
        try registry.register(Self.example)
        defer { registry.unregister(name: "snapshot-poll") }
        let tree = try ScratchTree()
        try tree.write("config.json", #"{"filewatch": {"backend": "snapshot-poll", "pollInterval": 0.02}}"#, in: .outside)
        let fromFile = try await WatchConfiguration.load(roots: [tree.root], configFile: tree.path("config.json", in: .outside), environment: [:])
        #expect(fromFile.backendName == "snapshot-poll")
        let source = try fromFile.makeSource()
        #expect(source.backendName == "snapshot-poll")
        _ = try await observe(source.updates(), onReady: { try tree.write("from-file.txt", "x") }, until: { observed in
            observed.events.contains { $0.path.lastComponent?.string == "from-file.txt" }
        })
        var overrides = WatchConfiguration.Overrides()
        overrides.backend = "SNAPSHOT-poll"
        // The override wins over the environment, which wins over the file.
        let overridden = try await WatchConfiguration.load(roots: [tree.root], overrides: overrides,
                                                           configFile: tree.path("config.json", in: .outside),
                                                           environment: ["FILEWATCH_BACKEND": "polling"])
        #expect(overridden.backendName == "snapshot-poll")
        let fromEnvironment = try await WatchConfiguration.load(roots: [tree.root], configFile: tree.path("config.json", in: .outside),
                                                                environment: ["FILEWATCH_BACKEND": "polling"])
        #expect(fromEnvironment.backendName == "polling")
    }

    @Test("a clashing name is a typed error; an unknown name lists built-in and registered names")
    func namesAreChecked() async throws {
        let registry = FileSystemEventBackendRegistry.shared
        #expect(throws: FileSystemEventsError.backendNameTaken("inotify")) {
            try registry.register(RegisteredBackend(name: "inotify", summary: "") { options in SnapshotPollingSource(options: options) })
        }
        try registry.register(Self.example)
        defer { registry.unregister(name: "snapshot-poll") }
        #expect(throws: FileSystemEventsError.backendNameTaken("SNAPSHOT-POLL")) {
            try registry.register(RegisteredBackend(name: "SNAPSHOT-POLL", summary: "") { options in SnapshotPollingSource(options: options) })
        }
        do {
            _ = try await WatchConfiguration.load(roots: ["/tmp"], environment: ["FILEWATCH_BACKEND": "nosuch"])
            Issue.record("an unknown backend was accepted")
        } catch {
            #expect(error.description.contains("snapshot-poll") && error.description.contains("inotify"), "\(error)")
        }
        #expect(throws: FileSystemEventsError.self) { try FileSystemEventBackend(name: "nosuch") }
    }

    @Test("auto follows the registry's preference order, skipping what is unavailable")
    func autoPreference() throws {
        let registry = FileSystemEventBackendRegistry.shared
        try registry.register(Self.example)
        try registry.register(RegisteredBackend(name: "never-here", summary: "", availability: {
            .unavailable(reason: "not on this machine", remedy: "none")
        }) { options in SnapshotPollingSource(options: options) })
        defer {
            registry.unregister(name: "snapshot-poll")
            registry.unregister(name: "never-here")
            registry.autoPreference = nil
        }
        let tree = try ScratchTree()
        registry.autoPreference = ["never-here", "snapshot-poll", "inotify"]
        #expect(try FileSystemEventBackend.auto.makeSource(options: WatchOptions(roots: [tree.root])).backendName == "snapshot-poll")
        #expect(FileSystemEventBackend.autoChoice(for: [tree.root]) == "snapshot-poll", "what `filewatch backends` shows for auto")
        registry.autoPreference = ["polling"]
        #expect(try FileSystemEventBackend.auto.makeSource(options: WatchOptions(roots: [tree.root])).backendName == "polling")
        registry.autoPreference = nil
        #expect(try FileSystemEventBackend.auto.makeSource(options: WatchOptions(roots: [tree.root])).backendName != "snapshot-poll")
        #expect(FileSystemEventBackend.autoChoice(for: [tree.root]) == FileSystemEventBackend.auto.resolved(for: [tree.root]).rawValue)
    }
}
