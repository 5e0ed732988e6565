#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import Testing

/// A move onto a name whose item the model has (from outside the tree, or half of an exchange
/// with a name whose creation still waits) leaves the name's arrival to be examined, and a
/// change read meanwhile at that name is not about the model's item there: it is kept until
/// the arrival is examined (``InotifyWatch/changesWhilePending``). When a rename of a known
/// item onto the same name is read before that, the examination finds the model's item (the
/// renamed one) and tells nothing, and the kept change was dropped with it: a file written
/// after it was renamed onto the name was never told modified (scenario 110 beside the rest
/// of the suite, about one burst in 10,000: `mv file1 build; echo y >> build` after an exchange
/// that brought a file to `build`).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ChangeAtReplacedNameTests {
    @Test("a file renamed onto a name a move from outside replaced, then written, is told modified")
    func writtenAfterRenameOntoMovedInName() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("build", "the first build")
        try tree.write("file1", "x")
        try tree.write("arriving", "from outside", in: .outside)
        let (collector, before) = try await ReadTogether.watch(tree, readingTogether: { [tree] in
            try? tree.rename("arriving", to: "build", from: .outside, to: .root)
            try? tree.rename("file1", to: "build")
            try? tree.append("build", "y")
        })
        var reader = collector
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()

        #expect(try tree.read("build") == Array("xy".utf8), "the changes were not made")
        ReadTogether.expectReplayMatches(tree, before, reader.events)
    }

    @Test("a name a move from outside replaced, then exchanged with a known file and written, is told modified; the arrival is told where it went")
    func writtenAfterExchangeOfMovedInName() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.write("build", "the first build")
        try tree.write("other", "x")
        try tree.write("arriving", "from outside", in: .outside)
        let (collector, before) = try await ReadTogether.watch(tree, readingTogether: { [tree] in
            try? tree.rename("arriving", to: "build", from: .outside, to: .root)
            try? tree.exchange("build", "other")
            try? tree.append("build", "y")
        })
        var reader = collector
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()

        #expect(try tree.read("build") == Array("xy".utf8) && tree.read("other") == Array("from outside".utf8),
                "the changes were not made")
        ReadTogether.expectReplayMatches(tree, before, reader.events)
    }
}
#endif
