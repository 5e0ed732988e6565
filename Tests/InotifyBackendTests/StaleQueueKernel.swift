#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Foundation
import SystemPackage

/// The real kernel, except that the creation of a file named ``triggerName`` reads as
/// `IN_Q_OVERFLOW`, and what was queued behind it is handed out only `delay` later. Meanwhile
/// every read yields one write to a file outside the tree, and the queue never looks drained.
///
/// That is an overflow in a tree that never stops changing: the rebuild after it cannot wait
/// for a drained queue, so it lists the disk while the events of the changes made before it
/// are still queued (see `InotifyWatch.performRequestedReconcile(queueDrained:)`).
struct StaleQueueKernel: RealKernelWrapper {
    static let triggerName: [UInt8] = Array("overflow-here".utf8)

    var real: RawInotifyKernel
    private let delay: Duration
    private var held: [Inotify.Event] = []
    private var releaseAt: ContinuousClock.Instant?
    private let nudgeFile: NudgeFile

    init(delay: Duration) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.delay = delay
        nudgeFile = try NudgeFile(on: &real)
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        if let releaseAt {
            // Not read from the real queue meanwhile: the nudge stays there, unread, and keeps
            // the descriptor readable; whatever comes later stays behind what is held.
            guard ContinuousClock.now >= releaseAt else {
                events.append(nudgeFile.event)
                return .success(())
            }
            self.releaseAt = nil
            events += held
            held = []
            return .success(())
        }
        var read: [Inotify.Event] = []
        let result = real.read(into: &read, maximumBytes: maximumBytes)
        guard case .success = result else { return result }
        if let trigger = read.firstIndex(where: { $0.name == Self.triggerName && $0.mask.contains(.create) }) {
            events += read[..<trigger]
            events.append(Inotify.Event(watch: -1, mask: .queueOverflow, cookie: 0, name: []))
            held = Array(read[(trigger + 1)...])
            releaseAt = ContinuousClock.now + delay
            nudgeFile.nudge()
        } else {
            events += read
        }
        return .success(())
    }

    func hasPendingEvents() -> Bool { releaseAt != nil || real.hasPendingEvents() }

    mutating func close() {
        real.close()
        nudgeFile.remove()
    }
}
#endif
