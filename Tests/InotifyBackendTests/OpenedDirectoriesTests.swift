#if os(Linux)
import ConformanceTestSupport
import FileSystemEventsConformance
import FileSystemEventsCore
@testable import FileSystemEventsInotify
import Glibc
import Testing

/// The descriptors a batch of creations keeps open while it is examined.
struct OpenedDirectoriesTests {
    /// The process's descriptors open on `root` or below it (by their /proc/self/fd links):
    /// only the test's own. A count of every descriptor also saw other tests' watches close
    /// on their own threads after those tests ended (a fresh-clone CI run failed so, twice).
    static func openDescriptors(under root: String) -> Int {
        openDescriptorLinks().filter { $0.target == root || $0.target.hasPrefix(root + "/") }.count
    }

    @Test("a batch spread over many directories holds a bounded number of descriptors, all closed after")
    func boundedAcrossDirectories() throws {
        let tree = try ScratchTree()
        let count = 100  // three times the capacity
        for index in 0..<count { try tree.makeDirectory(RelativePath("d\(index)")) }
        let nodes = (0..<count).map { WatchedDirectory(parent: nil, name: Array("d\($0)".utf8), root: 0) }
        var cache = InotifyWatch<RawInotifyKernel>.OpenedDirectories()
        let before = Self.openDescriptors(under: tree.root.string)
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
            peak = max(peak, Self.openDescriptors(under: tree.root.string) - before)
        }
        cache.closeAll()
        #expect(peak <= InotifyWatch<RawInotifyKernel>.OpenedDirectories.capacity)
        #expect(Self.openDescriptors(under: tree.root.string) == before)
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
