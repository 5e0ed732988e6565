@testable import FileSystemEventsApps
import FileSystemEventsConformance
import FileSystemEventsCore
import Testing

/// What a listing reads of a directory renamed into it.
struct DirectoryReaderTests {
    /// The listing puts the directory's own entry beside the names read below it: both must
    /// come from one descriptor, or another directory standing at the name a moment later
    /// lends its identity to names that are not its own (see `listsMovedDirectory`).
    @Test("a subtree read gives the entries below the directory and the directory's own entry, from the same descriptor")
    func subtreeWithItsDirectory() throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.makeDirectories("d/e")
        try tree.write("d/f", "x")
        try tree.write("d/e/g", "y")
        let reader = try DirectoryReader(tree.root, isRecursive: true, includesHidden: true)
        let descriptor = try reader.open()
        defer { Syscalls.close(descriptor) }

        let read = try #require(reader.listSubtree(Array("d".utf8), in: descriptor))
        let directory = try #require(read.directory)
        #expect(directory.nameBytes == Array("d".utf8))
        #expect(directory.type == .directory)
        #expect(directory.identity == (try Syscalls.status(tree.path("d")).get().identity))
        #expect(read.entries.map { String(decoding: $0.nameBytes, as: UTF8.self) }.sorted() == ["d/e", "d/e/g", "d/f"])

        #expect(reader.listSubtree(Array("gone".utf8), in: descriptor) == nil)
        let file = try #require(reader.listSubtree(Array("d/f".utf8), in: descriptor))
        #expect(file.directory == nil && file.entries.isEmpty)
    }
}
