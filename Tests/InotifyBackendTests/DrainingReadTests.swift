#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage
import Testing

/// A watch reads its inotify descriptor until the queue is empty. The kernel's `read(2)` takes
/// events until the queue is empty or the next one does not fit, so a read that leaves room
/// for the longest event already proves the queue empty, and the watch skips the read that
/// would only say `EAGAIN` (``RawInotifyKernel/lastReadEmptiedQueue``): one of the nine system
/// calls between a create and its line on a pipe. Wrongly claimed, the watch would settle
/// pending work (renames waiting for their other half, creations waiting to be examined) with
/// events still queued.
@Suite(.serialized)
struct DrainingReadTests {
    @Test("a read that leaves room for the longest event proves the queue empty; one that fills its buffer does not")
    func shortReadProvesTheQueueEmpty() throws {
        let tree = try ScratchTree()
        var kernel = try RawInotifyKernel()
        defer { kernel.close() }
        _ = try kernel.addWatch(path: Array(tree.root.string.utf8), mask: .create).get()

        try tree.write("one", "x")
        var events: [Inotify.Event] = []
        try kernel.read(into: &events, maximumBytes: RawInotifyKernel.readBufferSize).get()
        #expect(events.count == 1)
        #expect(kernel.lastReadEmptiedQueue, "one event in a 256 KiB buffer: the queue was left empty")
        events.removeAll()
        guard case .failure(.resourceTemporarilyUnavailable) = kernel.read(into: &events, maximumBytes: RawInotifyKernel.readBufferSize) else {
            Issue.record("the read said to be saved found events: \(events.count)")
            return
        }

        // 400 creations of 32 bytes each (a name of 6 to 8 bytes is padded to 16), read 4 KiB
        // (128 events) at a time: three full reads, then one of 16 events.
        let names = (0..<400).map { "file-\($0)" }
        for name in names { try tree.write(RelativePath(name), "") }
        var read: [String] = []
        var fullReads = 0
        reading: while true {
            events.removeAll()
            switch kernel.read(into: &events, maximumBytes: 4_096) {
            case .success:
                read += events.map { String(decoding: $0.name, as: UTF8.self) }
                if !kernel.lastReadEmptiedQueue {
                    fullReads += 1
                    continue reading
                }
                events.removeAll()
                guard case .failure(.resourceTemporarilyUnavailable) = kernel.read(into: &events, maximumBytes: 4_096) else {
                    Issue.record("a read claimed the queue empty with \(events.count) events still in it")
                    break reading
                }
                break reading
            case .failure(.resourceTemporarilyUnavailable):
                Issue.record("the queue ran empty without a read saying so, after \(read.count) events")
                break reading
            case .failure(let errno):
                throw errno
            }
        }
        #expect(fullReads == 3, "reads that filled 4 KiB: \(fullReads)")
        #expect(read.count == names.count && read.elementsEqual(names), "read \(read.count) of \(names.count) creations, or out of order")
    }
}
#endif
