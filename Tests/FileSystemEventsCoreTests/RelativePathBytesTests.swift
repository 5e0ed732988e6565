import FileSystemEventsCore
import Testing

/// `isBelow` and `isWithin`, the one test of "this path is that name or lies below it" that the
/// listing, the watcher's subscriptions, the settle tracker and the follower share.
@Suite struct RelativePathBytesTests {
    private func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

    @Test("a path lies below a name only past a slash: siblings that share the name's bytes do not")
    func belowNeedsASlash() {
        #expect(bytes("a/x").isBelow(bytes("a")))
        #expect(bytes("a/b/c").isBelow(bytes("a/b")))
        #expect(bytes("a/b/c").isBelow(bytes("a")))
        // They sort between `a` and `a/x`, and start with its bytes.
        for sibling in ["a-", "a.", "a0", "ab", "a-/x", "ab/c"] {
            #expect(!bytes(sibling).isBelow(bytes("a")), "\(sibling)")
            #expect(!bytes(sibling).isWithin(bytes("a")), "\(sibling)")
        }
        #expect(!bytes("a").isBelow(bytes("a")))
        #expect(!bytes("a").isBelow(bytes("a/x")))
        #expect(!bytes("b/a").isBelow(bytes("a")))
    }

    @Test("within is the name itself or below it; the empty path, the root, holds every path")
    func withinAndTheRoot() {
        #expect(bytes("a").isWithin(bytes("a")))
        #expect(bytes("a/x").isWithin(bytes("a")))
        #expect(!bytes("b").isWithin(bytes("a")))
        #expect(bytes("a").isBelow([]))
        #expect(![UInt8]().isBelow([]))
        #expect([UInt8]().isWithin([]))
        #expect(bytes("a/b").isWithin([]))
        #expect(!bytes("").isWithin(bytes("a")))
    }

    @Test("a slice is compared from its own start, as a whole array would be")
    func slices() {
        let path = bytes("zz/a/x")
        let slice = path[3...]  // "a/x", starting at index 3
        #expect(slice.isBelow(bytes("a")[...]))
        #expect(slice.isWithin(bytes("a/x")[...]))
        #expect(!slice.isBelow(bytes("zz")[...]))
        #expect(path[..<4].isBelow(bytes("zz")[...]))  // "zz/a"
    }
}
