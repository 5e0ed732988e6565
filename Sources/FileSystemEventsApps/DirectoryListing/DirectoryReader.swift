#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
package import FileSystemEventsCore
package import SystemPackage

/// Reads a listed directory through one open descriptor: the whole listing at the start, a
/// subtree that was renamed into place, and one entry per changed name.
///
/// Everything is relative to the descriptor (`openat`, `statx` with a relative name) and on
/// bytes, so an entry costs one system call and no path string, and a name that is not valid
/// UTF-8 is read like any other.
package struct DirectoryReader {
    package let directory: FilePath
    package let descriptor: CInt
    package let isRecursive: Bool
    package let includesHidden: Bool

    /// Opens `directory`, failing with the error a user can act on: it does not exist, is not a
    /// directory, or may not be read.
    package static func open(
        _ directory: FilePath,
        isRecursive: Bool,
        includesHidden: Bool
    ) throws(FileSystemEventsError) -> DirectoryReader {
        switch Syscalls.status(directory, followSymlinks: true) {
        case .success(let status):
            guard status.itemType == .directory else { throw .notADirectory(directory) }
        case .failure(let errno):
            throw .forRoot(directory, call: "statx", errno: errno)
        }
        switch Syscalls.open(directory, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) {
        case .success(let descriptor):
            return DirectoryReader(directory: directory, descriptor: descriptor, isRecursive: isRecursive, includesHidden: includesHidden)
        case .failure(let errno):
            if errno == .notDirectory { throw .notADirectory(directory) }
            throw .forRoot(directory, call: "open", errno: errno)
        }
    }

    package func close() {
        Syscalls.close(descriptor)
    }

    /// What the listing's source must leave out: hidden entries (and, recursively, everything
    /// below a hidden directory) unless they are wanted.
    package static func filter(includesHidden: Bool) -> PathFilter {
        includesHidden ? .everything : PathFilter(exclude: [PathGlob(".*")])
    }

    private var scanner: SnapshotScanner {
        SnapshotScanner(isRecursive: isRecursive, followsSymlinks: false, filter: Self.filter(includesHidden: includesHidden))
    }

    /// Every entry of the directory, unsorted.
    package func listAll() throws(FileSystemEventsError) -> [DirectoryEntry] {
        let listed: CInt
        switch Syscalls.openDirectory(".", relativeTo: descriptor, followSymlinks: true) {
        case .success(let fd): listed = fd
        case .failure(let errno): throw .forRoot(directory, call: "openat", errno: errno)
        }
        let (tree, unreadable) = scanner.scanDirectory(listed, relativePath: [])
        if let failure = unreadable.first(where: { $0.relativePath.isEmpty }) {
            throw .forRoot(directory, call: "opendir", errno: failure.errno)
        }
        var entries: [DirectoryEntry] = []
        entries.reserveCapacity(tree.entries.count)
        flatten(tree, prefix: [], into: &entries)
        return entries
    }

    /// The entries at and below `relativePath` (a directory renamed into the tree), or nothing
    /// if it is not a directory any more.
    package func listSubtree(_ relativePath: [UInt8]) -> [DirectoryEntry] {
        let opened = withCString(relativePath) { Syscalls.openDirectory($0, relativeTo: descriptor) }
        guard case .success(let fd) = opened else { return [] }
        let (tree, _) = scanner.scanDirectory(fd, relativePath: relativePath)
        var entries: [DirectoryEntry] = []
        flatten(tree, prefix: relativePath, into: &entries)
        return entries
    }

    /// The entry now at `relativePath`, or `nil` if there is none (or it is hidden and hidden
    /// entries are not listed).
    package func entry(at relativePath: [UInt8]) -> DirectoryEntry? {
        if !includesHidden && DirectoryEntry.isHidden(relativePath) { return nil }
        let result = withCString(relativePath) { Syscalls.status($0, relativeTo: descriptor) }
        guard case .success(let status) = result else { return nil }
        return DirectoryEntry(nameBytes: relativePath, status: status)
    }

    /// The listed directory itself, through the descriptor (which follows it if it is renamed).
    package func directoryStatus() -> FileStatus? {
        guard case .success(let status) = Syscalls.status("", relativeTo: descriptor) else { return nil }
        return status
    }

    private func flatten(_ directory: SnapshotDirectory, prefix: [UInt8], into entries: inout [DirectoryEntry]) {
        for entry in directory.entries {
            let name = prefix.appendingComponent(entry.name)
            if !includesHidden && entry.name.first == UInt8(ascii: ".") { continue }
            entries.append(DirectoryEntry(nameBytes: name, status: entry.status))
            if let child = entry.directory { flatten(child, prefix: name, into: &entries) }
        }
    }
}
