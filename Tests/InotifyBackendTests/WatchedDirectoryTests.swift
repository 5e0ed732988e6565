#if os(Linux)
@testable import FileSystemEventsInotify
import Glibc
import Testing

/// glibc's `malloc_usable_size(3)`: what the block a pointer is in holds (`<malloc.h>` is not
/// part of the Glibc module).
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int

/// The inotify model's node: one per watched directory, so its size is part of the watcher's
/// memory on a large tree.
struct WatchedDirectoryTests {
    @Test("a node takes one 144-byte malloc block, its short name inside it")
    func nodeFitsItsBlock() {
        let root = WatchedDirectory(parent: nil, name: [], root: 0)
        let node = WatchedDirectory(parent: root, name: Array("src".utf8), root: 3)
        let block = mallocUsableSize(Unmanaged.passUnretained(node).toOpaque())
        #expect(block <= 136, "a node's block holds \(block) bytes")
        #expect(node.name == Array("src".utf8))
        #expect(node.root == 3)
    }

    @Test("names short and long, renamed and walked up to the root", arguments: [1, 15, 16, 255])
    func namesRoundTrip(length: Int) {
        let root = WatchedDirectory(parent: nil, name: [], root: 0)
        let middle = WatchedDirectory(parent: root, name: Array(repeating: UInt8(ascii: "m"), count: length), root: 0)
        let leaf = WatchedDirectory(parent: middle, name: [0xFF, 0x01], root: 0)
        root.children[middle.name] = WatchedEntry(type: .directory, inode: 1, directory: middle)
        middle.children[leaf.name] = WatchedEntry(type: .directory, inode: 2, directory: leaf)
        #expect(leaf.relativePath == middle.name + [UInt8(ascii: "/"), 0xFF, 0x01])
        #expect(leaf.isAttached)
        // Renamed in the model the way an event renames it: the old name no longer attaches it.
        let renamed = Array(repeating: UInt8(ascii: "r"), count: length)
        root.children[middle.name] = nil
        #expect(!leaf.isAttached)
        middle.name = renamed
        root.children[renamed] = WatchedEntry(type: .directory, inode: 1, directory: middle)
        #expect(leaf.isAttached)
        #expect(leaf.relativePath == renamed + [UInt8(ascii: "/"), 0xFF, 0x01])
        middle.withName { #expect(Array($0) == renamed) }
    }
}
#endif
