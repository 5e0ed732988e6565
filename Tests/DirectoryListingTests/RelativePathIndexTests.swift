@testable import FileSystemEventsApps
import FileSystemEventsConformance
import Testing

/// The index a listing finds what a rename takes along with: for any paths inserted, in any
/// order and with or without the directories on the way, the paths below a directory must be
/// exactly those a pass over every path finds (and the directories on the way to them).
struct RelativePathIndexTests {
    @Test("random paths: paths(below:) holds every inserted path below the directory, and nothing outside it")
    func randomPaths() {
        var random = SplitMix64(seed: 0x1dea)
        let components = ["a", "b", "ab", "a.b", "b-", "c"]
        for _ in 0..<300 {
            var index = RelativePathIndex()
            var inserted = Set<[UInt8]>()
            for _ in 0..<Int(random.next() % 40) {
                let depth = 1 + Int(random.next() % 5)
                let path = (0..<depth).map { _ in components[Int(random.next() % UInt64(components.count))] }.joined(separator: "/")
                index.insert(Array(path.utf8))
                inserted.insert(Array(path.utf8))
            }
            let directories = Set(inserted.flatMap { path in
                path.indices.filter { path[$0] == UInt8(ascii: "/") }.map { Array(path[..<$0]) }
            }).union(inserted).union([Array("zz".utf8)])
            for directory in directories {
                let prefix = directory + [UInt8(ascii: "/")]
                let expected = inserted.filter { $0.starts(with: prefix) }
                let found = index.paths(below: directory)
                #expect(Set(found).isSuperset(of: expected), "missing below \(String(decoding: directory, as: UTF8.self))")
                #expect(found.allSatisfy { $0.starts(with: prefix) }, "outside \(String(decoding: directory, as: UTF8.self))")
                #expect(found.count == Set(found).count, "a path found twice")
                // Beyond the inserted paths, only the directories on the way to them.
                for extra in Set(found).subtracting(expected) {
                    #expect(inserted.contains { $0.starts(with: extra + [UInt8(ascii: "/")]) })
                }
            }
        }
    }

    @Test("a path 3,000 levels deep, inserted again and again below: each directory is linked once")
    func deepPath() {
        var index = RelativePathIndex()
        var path: [UInt8] = []
        for level in 0..<3_000 {
            path = path.appendingComponentForTest("d\(level % 10)")
            index.insert(path + Array("/f".utf8))
        }
        let found = index.paths(below: Array("d0".utf8))
        #expect(found.count == 2 * 3_000 - 1)
        #expect(Set(found).count == found.count)
    }
}

extension [UInt8] {
    fileprivate func appendingComponentForTest(_ name: String) -> [UInt8] {
        isEmpty ? Array(name.utf8) : self + [UInt8(ascii: "/")] + Array(name.utf8)
    }
}
