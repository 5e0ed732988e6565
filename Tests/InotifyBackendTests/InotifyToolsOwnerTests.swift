#if InotifyTools && os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
@testable import FileSystemEventsInotifyTools
import Foundation
import Testing

/// The process-wide owner of libinotifytools, whose state every inotifytools source shares:
/// a flag left set there misleads all of them at once.
@Suite(.serialized)
struct InotifyToolsOwnerTests {
    /// A move out of the watched tree has no `IN_MOVED_TO`: the owner holds its first half
    /// until the next event, then routes it alone. Its "a move is held" flag must drop then,
    /// or every source's model waits for a queue that never goes quiet (and a directory that
    /// is not where the model says is never rescanned).
    @Test("a move out of the tree routed alone leaves no unread event behind in the owner")
    func moveOutClearsTheHeldFlag() async throws {
        let tree = try ScratchTree()
        try tree.write("leaving.txt", "x")
        try tree.makeDirectory("elsewhere", in: .outside)
        let stream = InotifyToolsEventSource(options: WatchOptions(roots: [tree.root])).updates()
        let leaving = tree.path("leaving.txt")
        var sawReady = false
        var sawRemoval = false
        for try await update in stream {
            switch update {
            case .ready:
                sawReady = true
                try tree.rename("leaving.txt", to: "elsewhere/leaving.txt", to: .outside)
            case .events(let events) where sawReady && events.contains(where: { $0.path == leaving && $0.kind == .removed }):
                sawRemoval = true
            default:
                break
            }
            if sawRemoval { break }
        }
        #expect(sawRemoval)
        // Cleared on the owner's thread right after routing: wait for it, with a deadline.
        let deadline = ContinuousClock.now + .seconds(10)
        while InotifyToolsOwner.shared.libraryHasUnreadEvents && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(!InotifyToolsOwner.shared.libraryHasUnreadEvents, "the owner still says a move is held")
        await stream.stop()
    }
}
#endif
