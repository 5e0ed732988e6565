#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import FileSystemEventsCore

/// What is on disk, read independently of any backend (plain `opendir`/`lstat` by path), so a
/// bug in the library's own scanner cannot hide a bug in a backend.
public struct DiskTree: Sendable, Equatable {
    public struct Item: Sendable, Equatable {
        public var type: FileItemType
        /// FNV-1a of a regular file's content; `nil` for everything else.
        public var contentHash: UInt64?
    }

    public var items: [RelativePath: Item]

    /// Reads the tree below `root`; `depth` 1 reads only the root's children.
    package static func read(root: [UInt8], recursive: Bool, admits: (RelativePath, Bool) -> Bool) -> DiskTree {
        var items: [RelativePath: Item] = [:]
        func walk(_ absolute: [UInt8], _ relative: RelativePath) {
            for name in names(in: absolute) {
                let childAbsolute = absolute + [UInt8(ascii: "/")] + name
                let childRelative = relative / RelativePath(bytes: name)
                var info = stat()
                guard withC(childAbsolute, { lstat($0, &info) }) == 0 else { continue }
                let type = FileItemType(mode: UInt32(info.st_mode))
                guard admits(childRelative, type == .directory) else { continue }
                var hash: UInt64?
                if type == .file {
                    let fd = withC(childAbsolute) { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
                    if fd >= 0 {
                        hash = fnv1a(readAll(fd))
                        close(fd)
                    }
                }
                items[childRelative] = Item(type: type, contentHash: hash)
                if type == .directory && recursive {
                    walk(childAbsolute, childRelative)
                }
            }
        }
        walk(root, .root)
        return DiskTree(items: items)
    }

    static func names(in directory: [UInt8]) -> [[UInt8]] {
        guard let stream = withC(directory, { opendir($0) }) else { return [] }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { chars in
                    Array(UnsafeRawBufferPointer(start: chars, count: strlen(chars)))
                }
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        return names
    }

    static func readAll(_ fd: CInt) -> [UInt8] {
        var content: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc_read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            content.append(contentsOf: chunk[..<count])
        }
        return content
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

private func Glibc_read(_ fd: CInt, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
