import FileSystemEventsConformance
import FileSystemEventsCore
import PlatformLibc
import SystemPackage
import Testing

/// The batched directory reader under the polling scan and the inotify crawl: what it hands
/// out must be exactly what the directory holds, however many batches that takes.
@Suite struct DirectoryEntryReaderTests {
    @Test("every entry once, across many 64 KiB batches, with its d_type and inode; no . or ..")
    func listsEverythingAcrossBatches() throws {
        let tree = try ScratchTree()
        // About 3,000 records of 140 bytes: six or seven batches.
        let padding = String(repeating: "n", count: 110)
        var expected: [[UInt8]: FileItemType] = [:]
        for index in 0..<3_000 {
            let name = "file-\(index)-\(padding)"
            try tree.write(RelativePath(name))
            expected[Array(name.utf8)] = .file
        }
        for index in 0..<20 {
            try tree.makeDirectory(RelativePath("directory-\(index)"))
            expected[Array("directory-\(index)".utf8)] = .directory
        }
        try tree.symlink("link", pointingTo: "file-0-\(padding)")
        expected[Array("link".utf8)] = .symlink
        let invalidUTF8: [UInt8] = [0x62, 0xFF, 0x0A, 0x20]  // "b", an invalid byte, newline, space
        try tree.write(RelativePath(bytes: invalidUTF8))
        expected[invalidUTF8] = .file

        let descriptor = try #require(try? Syscalls.openDirectory(atPath: tree.root.bytes, followSymlinks: true).get())
        defer { Syscalls.close(descriptor) }
        var listed: [[UInt8]: (type: FileItemType, inode: UInt64)] = [:]
        var duplicates = 0
        let result = DirectoryEntryReader().forEachEntry(in: descriptor) { entry in
            let name = [UInt8](UnsafeRawBufferPointer(start: entry.name, count: strlen(entry.name)))
            if listed.updateValue((entry.itemType, entry.inode), forKey: name) != nil { duplicates += 1 }
        }
        #expect(throws: Never.self) { try result.get() }
        #expect(duplicates == 0)
        #expect(Set(listed.keys) == Set(expected.keys))
        for (name, type) in expected {
            guard let found = listed[name] else { continue }
            #expect(found.type == type, "d_type of \(name)")
            let status = try #require(try? Syscalls.status(atPath: tree.root.bytes + [0x2F] + name).get())
            #expect(found.inode == status.inode, "d_ino of \(name)")
        }
    }

    @Test("a directory removed while open lists as empty, as readdir treats it, not as a failure")
    func removedWhileOpen() throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("gone")
        let descriptor = try #require(try? Syscalls.openDirectory(atPath: tree.path("gone").bytes, followSymlinks: false).get())
        defer { Syscalls.close(descriptor) }
        try tree.removeDirectory("gone")
        var count = 0
        let result = DirectoryEntryReader().forEachEntry(in: descriptor) { _ in count += 1 }
        #expect(throws: Never.self) { try result.get() }
        #expect(count == 0)
    }
}
