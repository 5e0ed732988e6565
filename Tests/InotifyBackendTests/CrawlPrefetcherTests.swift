#if os(Linux)
import FileSystemEventsConformance
import Foundation
import FileSystemEventsCore
@testable import FileSystemEventsInotify
import Glibc
import SystemPackage
import Testing

/// The thread that opens, watches and lists a start-up's directories ahead of the crawl
/// (``CrawlPrefetcher``): it must hand them over in exactly the crawl's order, each watched
/// and listed, skip what the crawl does not enter, and leave no descriptor open however the
/// crawl ends.
@Suite(.serialized) struct CrawlPrefetcherTests {
    private static func openDescriptors(_ tree: ScratchTree) -> Int { OpenedDirectoriesTests.openDescriptors(under: tree.root.string) }

    /// A prefetcher walking `tree` for the inotify instance `inotify`.
    private static func prefetcher(_ tree: ScratchTree, _ inotify: CInt, budget: Int) throws -> CrawlPrefetcher {
        let prefetcher = CrawlPrefetcher.start(
            rootPath: tree.root.bytes, adder: .init(mask: Inotify.Mask.eventModel.union(.onlyDirectory), add: { Inotify.addWatch(inotify, path: $0, mask: $1) }),
            maximumHeldDescriptors: budget)
        guard let prefetcher else { throw PrefetchTestFailure("no thread for the prefetcher") }
        return prefetcher
    }

    private struct PrefetchTestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A tree of `width` directories per level, `depth` levels, with a file in each directory.
    private static func makeTree(_ tree: ScratchTree, width: Int, depth: Int) throws -> [String] {
        var directories: [String] = []
        func fill(_ prefix: String, _ level: Int) throws {
            guard level < depth else { return }
            for index in 0..<width {
                let path = prefix.isEmpty ? "d\(index)" : "\(prefix)/d\(index)"
                try tree.makeDirectory(RelativePath(path))
                try tree.write(RelativePath("\(path)/file"), "x")
                directories.append(path)
                try fill(path, level + 1)
            }
        }
        try fill("", 0)
        return directories
    }

    /// What the crawl does with what it takes: a handed-over descriptor is examined and
    /// closed; the directory's identity is returned.
    private static func accept(_ listed: CrawlPrefetcher.Listed, reader: DirectoryEntryReader) -> (FileStatus, DirectoryListing?)? {
        switch listed.opening {
        case .opened(let status, _, let descriptor):
            defer { if descriptor >= 0 { Syscalls.close(descriptor) } }
            if listed.isLeftToList {
                guard descriptor >= 0, case .success(let listing) = DirectoryListing.read(
                    descriptor: descriptor, with: reader, statEach: false, examinesDirectories: false, followSymlinks: false)
                else { return nil }
                return (status, listing)
            }
            if case .success(let listing)? = listed.listing { return (status, listing) }
            return (status, nil)
        case .failed, .unexamined:
            return nil
        }
    }

    /// Walks what the prefetcher hands over the way the crawl does (depth first, listing
    /// order), collecting the relative paths it takes; `skip` names directories the crawl does
    /// not enter; `watches` records each directory's watch (the root's under "").
    private static func crawl(_ prefetcher: CrawlPrefetcher, name: [UInt8], relative: String, depth: Int, skip: Set<String>,
                              reader: DirectoryEntryReader, into taken: inout [String], watches: inout [CInt: String], leftToList: inout Int) {
        guard let listed = prefetcher.take(name: name, depth: depth) else {
            Issue.record("out of step at \(relative.isEmpty ? "the root" : relative)")
            return
        }
        let accepted = accept(listed, reader: reader)
        #expect(accepted?.0.itemType == .directory, "\(relative) was not examined")
        guard case .success(let watch)? = listed.watch, let listing = accepted?.1 else {
            Issue.record("\(relative) was not watched and listed")
            return
        }
        if listed.isLeftToList {
            // Left to the crawl: nothing below it is handed over.
            leftToList += 1
            for entry in listing.entries where entry.isDirectory {
                Issue.record("\(relative), left to list, has a subdirectory")
            }
        }
        #expect(watches[watch] == nil, "\(relative) shares a watch")
        watches[watch] = relative
        if !relative.isEmpty { taken.append(relative) }
        if skip.contains(relative) {
            _ = prefetcher.skipDescendants(below: depth)
            return
        }
        for entry in listing.entries where entry.isDirectory {
            let child = listing.name(of: entry)
            let childPath = relative.isEmpty ? String(decoding: child, as: UTF8.self) : relative + "/" + String(decoding: child, as: UTF8.self)
            crawl(prefetcher, name: child, relative: childPath, depth: depth + 1, skip: skip, reader: reader, into: &taken,
                  watches: &watches, leftToList: &leftToList)
        }
    }

    @Test("hands over every directory in the crawl's order, watched and listed, by name and by path", arguments: [0, 2, 32])
    func wholeTree(heldDescriptors: Int) throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        let directories = try Self.makeTree(tree, width: 4, depth: 4)  // 340 directories
        guard case .success(let inotify) = Inotify.initialize() else {
            Issue.record("no inotify instance")
            return
        }
        let before = Self.openDescriptors(tree)
        let prefetcher = try Self.prefetcher(tree, inotify, budget: heldDescriptors)
        var taken: [String] = []
        var watches: [CInt: String] = [:]
        var leftToList = 0
        Self.crawl(prefetcher, name: [], relative: "", depth: 0, skip: [], reader: DirectoryEntryReader(), into: &taken,
                   watches: &watches, leftToList: &leftToList)
        #expect(prefetcher.finish().isEmpty)
        #expect(Set(taken) == Set(directories))
        #expect(taken.count == directories.count)
        #expect(watches.count == directories.count + 1)
        #expect(Self.openDescriptors(tree) == before)
        Syscalls.close(inotify)
    }

    @Test("each watch lands on the directory handed over, and the process's working directory stays where it was")
    func watchesFromInside() throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        let directories = try Self.makeTree(tree, width: 3, depth: 3)  // 39 directories
        guard case .success(let inotify) = Inotify.initialize() else {
            Issue.record("no inotify instance")
            return
        }
        defer { Syscalls.close(inotify) }
        let workingDirectory = FileManager.default.currentDirectoryPath
        let prefetcher = try Self.prefetcher(tree, inotify, budget: 4)
        var taken: [String] = []
        var watches: [CInt: String] = [:]
        var leftToList = 0
        Self.crawl(prefetcher, name: [], relative: "", depth: 0, skip: [], reader: DirectoryEntryReader(), into: &taken,
                   watches: &watches, leftToList: &leftToList)
        #expect(prefetcher.finish().isEmpty)
        #expect(FileManager.default.currentDirectoryPath == workingDirectory)
        // Nor is any thread left in the tree, which that would keep busy.
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for thread in threads {
            let directory = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/task/\(thread)/cwd")) ?? ""
            #expect(!directory.hasPrefix(tree.root.string), "thread \(thread) is still in \(directory)")
        }
        #expect(Set(watches.values) == Set(directories + [""]))

        // A file made in each directory is heard through that directory's watch.
        for directory in directories + [""] { try tree.write(RelativePath(directory.isEmpty ? "marker" : directory + "/marker"), "m") }
        var heard: [CInt: [UInt8]] = [:]
        let deadline = ContinuousClock.now + .seconds(30)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while heard.count < watches.count && ContinuousClock.now < deadline {
            guard case .success(let revents) = Syscalls.pollReadable([inotify], timeoutMilliseconds: 1_000),
                  revents.first.map({ $0 & Int16(POLLIN) != 0 }) == true else { continue }
            guard case .success(let count) = buffer.withUnsafeMutableBytes({ Syscalls.read(inotify, into: $0) }), count > 0 else { continue }
            var events: [Inotify.Event] = []
            buffer.withUnsafeBytes { Inotify.parse(UnsafeRawBufferPointer(rebasing: $0[..<count]), into: &events) }
            for event in events where event.mask.contains(.create) { heard[event.watch] = event.name }
        }
        for (watch, directory) in watches {
            #expect(heard[watch] == Array("marker".utf8), "\(directory.isEmpty ? "the root" : directory): its watch heard \(heard[watch].map { String(decoding: $0, as: UTF8.self) } ?? "nothing")")
        }
    }

    @Test("a crawl that falls behind: the descriptors handed over and not yet taken stay within the budget")
    func boundedDescriptors() throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        for index in 0..<400 { try tree.makeDirectory(RelativePath("leaf\(index)")) }
        guard case .success(let inotify) = Inotify.initialize() else {
            Issue.record("no inotify instance")
            return
        }
        defer { Syscalls.close(inotify) }
        let before = Self.openDescriptors(tree)
        let budget = 8
        let prefetcher = try Self.prefetcher(tree, inotify, budget: budget)
        // Nothing is taken until the walk is over: everything it found is waiting.
        let deadline = ContinuousClock.now + .seconds(60)
        while !prefetcher.hasEnded && ContinuousClock.now < deadline { sched_yield() }
        #expect(prefetcher.hasEnded)
        #expect(Self.openDescriptors(tree) - before <= budget, "\(Self.openDescriptors(tree) - before) descriptors held for 400 directories")
        var taken: [String] = []
        var watches: [CInt: String] = [:]
        var leftToList = 0
        Self.crawl(prefetcher, name: [], relative: "", depth: 0, skip: [], reader: DirectoryEntryReader(), into: &taken,
                   watches: &watches, leftToList: &leftToList)
        #expect(prefetcher.finish().isEmpty)
        #expect(taken.count == 400)
        #expect(Self.openDescriptors(tree) == before)
    }

    @Test("skips what the crawl does not enter, and a crawl that ends early leaves no descriptor open")
    func skippedAndAbandoned() throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        let directories = try Self.makeTree(tree, width: 3, depth: 4)  // 120 directories
        guard case .success(let inotify) = Inotify.initialize() else {
            Issue.record("no inotify instance")
            return
        }
        defer { Syscalls.close(inotify) }
        let before = Self.openDescriptors(tree)

        // d1 and d2/d0 are not entered: none of their descendants is handed over.
        let prefetcher = try Self.prefetcher(tree, inotify, budget: 4)
        var taken: [String] = []
        var watches: [CInt: String] = [:]
        var leftToList = 0
        Self.crawl(prefetcher, name: [], relative: "", depth: 0, skip: ["d1", "d2/d0"], reader: DirectoryEntryReader(), into: &taken,
                   watches: &watches, leftToList: &leftToList)
        #expect(prefetcher.finish().isEmpty)
        let expected = directories.filter { !$0.hasPrefix("d1/") && !$0.hasPrefix("d2/d0/") }
        #expect(Set(taken) == Set(expected))
        #expect(Self.openDescriptors(tree) == before)

        // The crawl stops after the root (a failure): the rest is released.
        let abandoned = try Self.prefetcher(tree, inotify, budget: 4)
        let root = try #require(abandoned.take(name: [], depth: 0))
        _ = Self.accept(root, reader: DirectoryEntryReader())
        #expect(abandoned.take(name: Array("no such".utf8), depth: 1) == nil)  // out of step: nothing taken
        let released = abandoned.finish()
        #expect(released.count <= directories.count)
        #expect(Self.openDescriptors(tree) == before)
    }
}
#endif
