#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
@testable import FileSystemEventsInotify
import Glibc
import Testing

/// The descriptors a batch of creations keeps open while it is examined.
struct OpenedDirectoriesTests {
    /// Entries of /proc/self/fd (with `.`, `..` and the listing's own: a constant offset).
    static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while readdir(directory) != nil { count += 1 }
        return count
    }

    @Test("a batch spread over many directories holds a bounded number of descriptors, all closed after")
    func boundedAcrossDirectories() throws {
        let tree = try ScratchTree()
        let count = 100  // three times the capacity
        for index in 0..<count { try tree.makeDirectory(RelativePath("d\(index)")) }
        let nodes = (0..<count).map { WatchedDirectory(parent: nil, name: Array("d\($0)".utf8), root: 0) }
        var cache = InotifyWatch<RawInotifyKernel>.OpenedDirectories()
        let before = Self.openDescriptors()
        var peak = 0
        var opened = 0
        for (index, node) in Array(nodes.enumerated()) + Array(nodes.enumerated()) {
            let opening = cache.opening(of: node) { _ in
                opened += 1
                let path = tree.absolute(RelativePath("d\(index)"), in: .root)
                guard case .success(let fd) = Syscalls.openDirectory(atPath: path, followSymlinks: false),
                      case .success(let status) = Syscalls.status(ofDescriptor: fd)
                else { return .stale }
                return .opened(fd, status)
            }
            guard case .opened = opening else {
                Issue.record("d\(index) did not open")
                continue
            }
            peak = max(peak, Self.openDescriptors() - before)
        }
        cache.closeAll()
        #expect(peak <= InotifyWatch<RawInotifyKernel>.OpenedDirectories.capacity)
        #expect(Self.openDescriptors() == before)
        // Names of one directory that come together share one open.
        var shared = InotifyWatch<RawInotifyKernel>.OpenedDirectories()
        var opens = 0
        for _ in 0..<10 {
            _ = shared.opening(of: nodes[0]) { _ in
                opens += 1
                return .stale
            }
        }
        shared.closeAll()
        #expect(opens == 1)
        #expect(opened >= 2 * count - InotifyWatch<RawInotifyKernel>.OpenedDirectories.capacity)
    }
}
#endif
