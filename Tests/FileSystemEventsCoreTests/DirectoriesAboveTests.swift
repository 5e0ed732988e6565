import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// `Syscalls.identitiesAbove(directoryAt:)`: what a watch that follows symlinks must not enter.
@Suite struct DirectoriesAboveTests {
    @Test("the directories above a root, from its parent up to /, and not the root itself; the same through a symlink to it")
    func fromParentToSlash() throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("a/b")
        let directory = tree.absolute("a/b", in: .root)
        let above = Syscalls.identitiesAbove(directoryAt: directory)
        let identity = { (path: [UInt8]) throws -> FileIdentity in
            try Syscalls.status(atPath: path, followSymlinks: true).get().identity
        }
        #expect(above.first == (try identity(tree.absolute("a", in: .root))))
        #expect(above.contains(try identity(tree.absolute(.root, in: .root))))
        #expect(above.last == (try identity(Array("/".utf8))))
        #expect(!above.contains(try identity(directory)))
        #expect(Set(above).count == above.count, "a directory twice: \(above)")

        // A root named through a symlink is the directory it leads to: its own parents count.
        try tree.symlink("b-link", pointingTo: String(decoding: directory, as: UTF8.self), in: .outside)
        #expect(Syscalls.identitiesAbove(directoryAt: tree.absolute("b-link", in: .outside)) == above)
        #expect(Syscalls.identitiesAbove(directoryAt: tree.absolute("missing", in: .root)).isEmpty)
    }
}
