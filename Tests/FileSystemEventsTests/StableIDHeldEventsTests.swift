import ConformanceTestSupport
import FileSystemEventsConformance
@testable import FileSystemEventsCore
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Items that have left their path by the time their creation is handled (``StableIDTracker``
/// holds their events): fed batch by batch, as a watch that keeps up with the writer reads
/// them, against a real tree. What is checked: every event of such an item goes out with the
/// ID its file ends up with, and events are held only while the item may still be found.
@Suite struct StableIDHeldEventsTests {
    static func event(_ kind: FileSystemEvent.Kind, _ path: FilePath, previous: FilePath? = nil, identity: FileIdentity?) -> FileSystemEvent {
        FileSystemEvent(kind: kind, path: path, previousPath: previous, itemType: .file, isSynthetic: false, identity: identity)
    }

    static func identity(of path: FilePath) throws -> FileIdentity {
        guard case .success(let status) = Syscalls.status(atPath: path.bytes) else { throw ConformanceFailure("\(path) is gone") }
        return status.identity
    }

    /// `echo > a; mv a b`, read as two batches: the creation's events went out without an ID
    /// (239 of 301 `created` in a burst of such pairs), since the rename that told where the
    /// file went came in the next batch.
    @Test("a file created and renamed, told in two batches: both batches' events carry the ID stamped on the file")
    func createdThenRenamedAcrossBatches() throws {
        let tree = try ScratchTree()
        var tracker = try StableIDStampEchoTests.tracker(for: tree)
        try tree.write("a", "x")
        let identity = try Self.identity(of: tree.path("a"))
        try tree.rename("a", to: "b")
        let first = tracker.process([
            Self.event(.created, tree.path("a"), identity: identity),
            Self.event(.modified, tree.path("a"), identity: identity),
        ])
        #expect(first.isEmpty && tracker.isHoldingEvents, "\(first)")
        let second = tracker.process([Self.event(.renamed, tree.path("b"), previous: tree.path("a"), identity: identity)])
        #expect(!tracker.isHoldingEvents)
        #expect(second.map(\.kind) == [.created, .modified, .renamed])
        let stored = try #require(StableIDTests.storedID(tree.path("b")))
        #expect(second.allSatisfy { $0.stableID == stored }, "\(second)")
    }

    @Test("a file moved on twice, and its directory renamed, before it is found: every event carries its ID")
    func foundAfterAChainOfRenames() throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("d")
        var tracker = try StableIDStampEchoTests.tracker(for: tree)
        try tree.write("d/a", "x")
        let identity = try Self.identity(of: tree.path("d/a"))
        try tree.rename("d/a", to: "d/b")
        try tree.rename("d/b", to: "d/c")
        try tree.rename("d", to: "e")
        var told = tracker.process([Self.event(.created, tree.path("d/a"), identity: identity)])
        told += tracker.process([Self.event(.renamed, tree.path("d/b"), previous: tree.path("d/a"), identity: identity)])
        #expect(told.isEmpty && tracker.isHoldingEvents, "\(told)")
        told += tracker.process([
            Self.event(.renamed, tree.path("d/c"), previous: tree.path("d/b"), identity: identity),
            FileSystemEvent(kind: .renamed, path: tree.path("e"), previousPath: tree.path("d"), itemType: .directory, isSynthetic: false),
        ])
        #expect(!tracker.isHoldingEvents)
        let fileEvents = told.filter { $0.itemType == .file }
        #expect(fileEvents.count == 3)
        let stored = try #require(StableIDTests.storedID(tree.path("e/c")))
        #expect(fileEvents.allSatisfy { $0.stableID == stored }, "\(told)")
    }

    /// A temporary file made and deleted at once has nothing left to stamp: its events must not
    /// wait for a batch that cannot identify it.
    @Test("a file created and removed before it was looked at: released with the removal, both events with one ID stored nowhere")
    func createdThenRemoved() throws {
        let tree = try ScratchTree()
        var tracker = try StableIDStampEchoTests.tracker(for: tree)
        try tree.write("t", "x")
        let identity = try Self.identity(of: tree.path("t"))
        try tree.remove("t")
        #expect(tracker.process([Self.event(.created, tree.path("t"), identity: identity)]).isEmpty)
        let told = tracker.process([Self.event(.removed, tree.path("t"), identity: identity)])
        #expect(told.map(\.kind) == [.created, .removed] && !tracker.isHoldingEvents)
        #expect(told[0].stableID != nil && told[1].stableID == told[0].stableID, "\(told)")
    }

    /// Two roots: a move between them is told as a removal and a creation.
    @Test("a file created in one root and moved to another at once: its first root's events carry the ID it has in the second")
    func movedIntoAnotherRoot() throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("A")
        try tree.makeDirectory("B")
        var tracker = StableIDTracker(roots: [tree.path("A"), tree.path("B")], writes: true)
        tracker.load([try FileTreeSnapshot.scan(tree.path("A")), try FileTreeSnapshot.scan(tree.path("B"))])
        try tree.write("A/f", "x")
        let identity = try Self.identity(of: tree.path("A/f"))
        try tree.rename("A/f", to: "B/f")
        #expect(tracker.process([Self.event(.created, tree.path("A/f"), identity: identity)]).isEmpty)
        let told = tracker.process([
            Self.event(.removed, tree.path("A/f"), identity: identity),
            Self.event(.created, tree.path("B/f"), identity: identity),
        ])
        #expect(told.map(\.kind) == [.created, .removed, .created])
        let stored = try #require(StableIDTests.storedID(tree.path("B/f")))
        #expect(told.allSatisfy { $0.stableID == stored }, "\(told)")
    }

    /// The same through the source, over a source that delivers the creation and the rename as
    /// two batches: before, the creation went out at once, without an ID.
    @Test("through StableIDSource: a creation and its rename read apart both carry the file's ID")
    func throughTheSource() async throws {
        let tree = try ScratchTree()
        let script = ScriptedSource.Script()
        let options = WatchOptions(roots: [tree.root])
        let stream = StableIDSource(options: options, base: ScriptedSource(options: options, script: script)).updates()
        let told = try await untilDeadline(.seconds(60)) { () async throws -> [FileSystemEvent] in
            var told: [FileSystemEvent] = []
            for try await update in stream {
                switch update {
                case .ready:
                    try tree.write("a", "x")
                    let identity = try Self.identity(of: tree.path("a"))
                    try tree.rename("a", to: "b")
                    script.send([Self.event(.created, tree.path("a"), identity: identity)])
                    script.send([Self.event(.renamed, tree.path("b"), previous: tree.path("a"), identity: identity)])
                case .events(let events):
                    told += events
                    if told.count >= 2 { return told }
                case .scanStarted, .diagnostic:
                    break
                }
            }
            return told
        }
        await stream.stop()
        let events = try #require(told, "the events never came")
        #expect(events.map(\.kind) == [.created, .renamed])
        let stored = try #require(StableIDTests.storedID(tree.path("b")))
        #expect(events.allSatisfy { $0.stableID == stored }, "\(events)")
    }

    @Test("a symlink that left its path is neither waited for nor given an ID")
    func symlinkIsNotWaitedFor() throws {
        let tree = try ScratchTree()
        var tracker = try StableIDStampEchoTests.tracker(for: tree)
        #expect(symlink("nowhere", tree.path("l").string) == 0)
        let identity = try Self.identity(of: tree.path("l"))
        try tree.rename("l", to: "m")
        let link = FileSystemEvent(kind: .created, path: tree.path("l"), itemType: .symlink, isSynthetic: false, identity: identity)
        let told = tracker.process([link])
        #expect(told.count == 1 && told[0].stableID == nil && !tracker.isHoldingEvents, "\(told)")
        let removed = tracker.process([FileSystemEvent(kind: .removed, path: tree.path("l"), itemType: .symlink, isSynthetic: false, identity: identity)])
        #expect(removed.count == 1 && removed[0].stableID == nil, "\(removed)")
    }

    @Test("held events are released as they are when nothing tells where the item went")
    func releasedWhenNothingFollows() throws {
        let tree = try ScratchTree()
        var tracker = try StableIDStampEchoTests.tracker(for: tree)
        try tree.write("a", "x")
        let identity = try Self.identity(of: tree.path("a"))
        try tree.rename("a", to: "b")
        #expect(tracker.process([Self.event(.created, tree.path("a"), identity: identity)]).isEmpty)
        let released = tracker.releaseHeldEvents()
        #expect(released.map(\.kind) == [.created] && released[0].stableID == nil && !tracker.isHoldingEvents)
        // The rename told later still identifies the file, for its own event and those after.
        let told = tracker.process([Self.event(.renamed, tree.path("b"), previous: tree.path("a"), identity: identity)])
        #expect(told.first?.stableID != nil && told.first?.stableID == StableIDTests.storedID(tree.path("b")))
    }
}
