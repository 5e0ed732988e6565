import ConformanceTestSupport
import FileSystemEvents
import FileSystemEventsConformance
import Testing

/// Which names a listing shows follows its source's events; the disk only says what each one
/// holds. A polling source cannot see a state that came and went between two scans, so a
/// listing that took the disk's word for which names exist could show such a state for good:
/// `removed n` read while `n` had been made again and was then moved away before the next scan
/// left `n` listed for ever (`filewatch list --live --backend polling`, 3 of 6 seeded bursts).
/// These scripted sources stand for a polling one, telling exactly what it would have seen.
@Suite struct ListingFollowsSourceTests {
    /// A scripted source standing for a polling one.
    private func listing(_ tree: ScratchTree, _ script: ScriptedSource.Script, firstScan: FileTreeSnapshot? = nil) -> DirectoryListing {
        DirectoryListing(directory: tree.root, options: .init()) { options throws(FileSystemEventsError) in
            ScriptedSource(options: options, script: script, isEventDriven: false, firstScan: firstScan)
        }
    }

    @Test("the first list is the source's first scan: a name made after it and gone before the next is never listed")
    func firstListIsTheFirstScan() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("a", "a")
        let firstScan = try FileTreeSnapshot.scan(tree.root, options: ListingOptionsProbe.watchOptions(for: tree))
        // Made after the scan, before the listing started, and gone before the next scan:
        // no event will ever name it.
        try tree.write("ghost", "g")
        let script = ScriptedSource.Script()
        let observer = ListingObserver(listing(tree, script, firstScan: firstScan))
        defer { Task { await observer.stop() } }
        try await observer.started()
        #expect(observer.list.map(\.name) == ["a"])
        try tree.remove("ghost")
        try tree.write("m1")
        script.send([FileSystemEvent(kind: .created, path: tree.path("m1"), itemType: .file, isSynthetic: false)])
        try await observer.sync(marker: "m1")
        #expect(observer.list.map(\.name) == ["a", "m1"])
        await observer.stop()
    }

    @Test("a name the source says is gone stays out of the list whatever the disk shows meanwhile")
    func goneNameStaysOut() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("n", "n")
        let script = ScriptedSource.Script()
        let observer = ListingObserver(listing(tree, script))
        defer { Task { await observer.stop() } }
        try await observer.started()
        #expect(observer.list.map(\.name) == ["n"])

        // The scan that saw `n` gone; by the time the listing reads, `n` is a new directory,
        // moved away again before the next scan, which therefore sees nothing of it.
        try tree.remove("n")
        try tree.makeDirectory("n")
        script.send([FileSystemEvent(kind: .removed, path: tree.path("n"), itemType: .file, isSynthetic: false)])
        try tree.write("m1")
        script.send([FileSystemEvent(kind: .created, path: tree.path("m1"), itemType: .file, isSynthetic: false)])
        try await observer.wait(for: "m1", timeout: .seconds(20)) { $0.list.contains { $0.name == "m1" } }
        #expect(!observer.list.contains { $0.name == "n" }, "\(observer.list)")
        try tree.rename("n", to: "n-elsewhere", from: .root, to: .outside)
        try await observer.sync(marker: "m1")
        #expect(observer.list.map(\.name) == ["m1"])
        await observer.stop()
    }

    @Test("a name the source says stands stays listed while the disk does not show it, and is read again with the next batch")
    func standingNameIsKept() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("a", "a")
        let script = ScriptedSource.Script()
        let observer = ListingObserver(listing(tree, script))
        defer { Task { await observer.stop() } }
        try await observer.started()
        #expect(observer.list.map(\.name) == ["a"])

        // The scan saw `b`; it is moved away before the listing reads it and back before the
        // next scan, which then sees it as it was and tells nothing.
        try tree.write("b", "bbb")
        try tree.rename("b", to: "b", from: .root, to: .outside)
        script.send([FileSystemEvent(kind: .created, path: tree.path("b"), itemType: .file, isSynthetic: false)])
        try await observer.wait(for: "b listed", timeout: .seconds(20)) { $0.list.contains { $0.name == "b" } }
        try tree.rename("b", to: "b", from: .outside, to: .root)
        try tree.write("m1")
        script.send([FileSystemEvent(kind: .created, path: tree.path("m1"), itemType: .file, isSynthetic: false)])
        try await observer.sync(marker: "m1")
        #expect(observer.list.map(\.name) == ["a", "b", "m1"])
        #expect(observer.list.first { $0.name == "b" }?.size == 3)
        await observer.stop()
    }
}

/// The watch options a default listing of `tree` asks its source for.
enum ListingOptionsProbe {
    static func watchOptions(for tree: ScratchTree) -> WatchOptions {
        DirectoryListing(directory: tree.root, options: .init()) { options throws(FileSystemEventsError) in
            ScriptedSource(options: options, script: ScriptedSource.Script(), isEventDriven: false)
        }.watchOptions
    }
}
