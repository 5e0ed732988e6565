import FileSystemEvents
import FileSystemEventsConformance
import Testing

/// The depth limit and the editor-files preset hold for every backend, for the initial tree
/// and for what changes later: nothing deeper than the limit, no editor file, ever reported.
@Suite(.serialized) struct FilterPerBackendTests {
    @Test("a depth limit: nothing deeper is reported, by any backend", arguments: availableBackends)
    func depthLimit(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("a/b/c")
        try tree.write("a/b/c/old.txt", "x")
        var options = WatchOptions(roots: [tree.root], pollInterval: .milliseconds(20))
        options.filter.maximumDepth = 1
        let source = try backend.makeSource(options: options)
        let marker = tree.path("a/marker")
        let observed = try await observe(source.updates(), onReady: {
            try tree.write("top.txt", "x")
            try tree.write("a/one.txt", "x")
            try tree.write("a/b/two.txt", "x")
            try tree.write("a/b/c/three.txt", "x")
            try tree.makeDirectories("a/new/deeper")
            try tree.write("a/new/deeper/four.txt", "x")
            try tree.append("a/b/c/old.txt", "more")
            try tree.write("a/marker", "x")
        }, untilEvent: { $0.path == marker })
        let reported = Set(observed.events.map { $0.path.string.dropFirst(tree.root.string.count + 1) })
        #expect(reported.contains("top.txt") && reported.contains("a/one.txt") && reported.contains("a/new"), "\(reported.sorted())")
        let tooDeep = reported.filter { $0.split(separator: "/").count > 2 }
        #expect(tooDeep.isEmpty, "\(backend): reported below the depth limit: \(tooDeep.sorted())")
    }

    @Test("the editor-files preset: swap, backup and temp files are never reported", arguments: availableBackends)
    func editorFiles(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        var options = WatchOptions(roots: [tree.root], pollInterval: .milliseconds(20))
        options.filter.ignoresEditorFiles = true
        let source = try backend.makeSource(options: options)
        let marker = tree.path("marker")
        let observed = try await observe(source.updates(), onReady: {
            // A vim save, roughly: write test, swap file, backup by rename, new file.
            try tree.write("4913", "")
            try tree.remove("4913")
            try tree.write(".doc.txt.swp", "swap")
            try tree.write("doc.txt", "v1")
            try tree.rename("doc.txt", to: "doc.txt~")
            try tree.write("doc.txt", "v2")
            try tree.remove("doc.txt~")
            // Sublime's atomic save, emacs' lock link, a download in progress.
            try tree.write(".subl1a2b.tmp", "v3")
            try tree.rename(".subl1a2b.tmp", to: "doc.txt")
            try tree.symlink(".#doc.txt", pointingTo: "user@host.123")
            try tree.write("movie.mkv.part", "partial")
            try tree.makeDirectory("backup~")
            try tree.write("marker", "x")
        }, untilEvent: { $0.path == marker })
        let names = Set(observed.events.flatMap { [$0.path, $0.previousPath].compactMap { $0?.lastComponent?.string } })
        for editorFile in ["4913", ".doc.txt.swp", "doc.txt~", ".subl1a2b.tmp", ".#doc.txt", "movie.mkv.part"] {
            #expect(!names.contains(editorFile), "\(backend) reported \(editorFile): \(observed.events)")
        }
        #expect(names.contains("doc.txt") && names.contains("backup~"), "\(backend): \(names.sorted())")
    }
}
