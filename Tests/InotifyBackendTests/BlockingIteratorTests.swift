#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import Foundation
import Testing

/// The blocking iterator, driven from a plain thread the way a C host or a benchmark harness
/// drives it.
@Suite(.serialized)
struct BlockingIteratorTests {
    @Test("a plain thread receives ready, then the events of its changes")
    func receivesEvents() async throws {
        let tree = try ScratchTree()
        let stream = InotifyEventSource(options: WatchOptions(roots: [tree.root])).updates()
        let target = tree.path("made.txt")
        let result: Bool = await withCheckedContinuation { continuation in
            let thread = Thread {
                var iterator = stream.makeBlockingIterator()
                var ready = false
                while let update = try? iterator.next() {
                    switch update {
                    case .ready:
                        ready = true
                        try? tree.write("made.txt", "x")
                    case .events(let events) where ready && events.contains(where: { $0.path == target && $0.kind == .created }):
                        continuation.resume(returning: true)
                        return
                    default:
                        break
                    }
                }
                continuation.resume(returning: false)
            }
            thread.start()
        }
        #expect(result)
        await stream.stop()
    }
}
#endif
