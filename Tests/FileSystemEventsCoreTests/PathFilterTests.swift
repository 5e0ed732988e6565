import FileSystemEventsCore
import Testing

/// Depth limits and the editor-files preset, as every backend applies them through `admits`.
@Suite struct PathFilterTests {
    func admits(_ filter: PathFilter, _ path: String, directory: Bool = false) -> Bool {
        let name = (path.split(separator: "/").last ?? Substring(path)).utf8
        return filter.admits(relativePath: path.utf8, name: name, isDirectory: directory)
    }

    @Test("depth 0 admits a root's direct children only and enters no directory")
    func depthZero() {
        let filter = PathFilter(maximumDepth: 0)
        #expect(admits(filter, "a.txt"))
        #expect(admits(filter, "dir", directory: true))
        #expect(!admits(filter, "dir/b.txt"))
        #expect(!admits(filter, "dir/sub", directory: true))
        #expect(!filter.descends(intoDirectoryAt: "dir".utf8))
    }

    @Test("depth 2 admits three levels of names and enters two levels of directories")
    func depthTwo() {
        let filter = PathFilter(maximumDepth: 2)
        #expect(admits(filter, "a/b/c.txt"))
        #expect(!admits(filter, "a/b/c/d.txt"))
        #expect(filter.descends(intoDirectoryAt: "a".utf8))
        #expect(filter.descends(intoDirectoryAt: "a/b".utf8))
        #expect(!filter.descends(intoDirectoryAt: "a/b/c".utf8))
        #expect(PathFilter().descends(intoDirectoryAt: "a/b/c/d/e".utf8))
        #expect(filter.prunesDirectories && !filter.isEmpty)
    }

    @Test("the editor preset drops swap, backup and partial files, never directories", arguments: [
        "a.txt.swp", ".a.txt.swp", ".a.txt.swx", "notes~", "4913", ".#notes.txt", ".subl5d3.tmp", "video.mp4.part", "d/e/.x.swo",
    ])
    func editorFiles(name: String) {
        let filter = PathFilter(ignoresEditorFiles: true)
        #expect(!admits(filter, name))
        #expect(admits(filter, name, directory: true))
        #expect(admits(PathFilter(), name))
    }

    @Test("the editor preset keeps ordinary names", arguments: ["a.txt", "swp", "file.swift", "49130", "a~b", "part", "x.partial", ".subl", "#a#"])
    func ordinaryNames(name: String) {
        #expect(admits(PathFilter(ignoresEditorFiles: true), name))
    }

    @Test("the preset and includes together: an included name that is an editor file is still dropped")
    func presetWithInclude() {
        let filter = PathFilter(include: [PathGlob("notes*")], ignoresEditorFiles: true)
        #expect(admits(filter, "notes.txt"))
        #expect(!admits(filter, "other.txt"))
        #expect(!admits(filter, "notes.txt~"))
    }
}
