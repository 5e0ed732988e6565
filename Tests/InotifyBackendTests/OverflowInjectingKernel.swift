#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// The real kernel, except that the creation of a file named ``triggerName`` reads as
/// `IN_Q_OVERFLOW`, and it is handed out only together with everything queued behind it up to
/// the creation of ``releaseName``: what a reader sees when the queue overflowed and more
/// changes were queued after the overflow before it caught up (the kernel queues again as soon
/// as the reader frees room). The test makes those changes between the two files.
///
/// With `dropsChangesBehind`, the events between the two files are lost instead, as they are
/// while a full queue stays full: only the rebuild from disk can tell those changes.
struct OverflowInjectingKernel: RealKernelWrapper {
    static let triggerName: [UInt8] = Array("overflow-here".utf8)
    static let releaseName: [UInt8] = Array("overflow-release".utf8)

    var real: RawInotifyKernel
    private var held: [Inotify.Event] = []
    private let dropsChangesBehind: Bool

    init(dropsChangesBehind: Bool = false) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.dropsChangesBehind = dropsChangesBehind
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        switch real.read(into: &held, maximumBytes: maximumBytes) {
        case .success, .failure(.resourceTemporarilyUnavailable): break
        case .failure(let errno): return .failure(errno)
        }
        var handedOut = 0
        if let trigger = held.firstIndex(where: { $0.name == Self.triggerName && $0.mask.contains(.create) }) {
            if let release = held[trigger...].firstIndex(where: { $0.name == Self.releaseName }) {
                held[trigger] = Inotify.Event(watch: -1, mask: .queueOverflow, cookie: 0, name: [])
                if dropsChangesBehind { held.removeSubrange((trigger + 1)..<release) }
                handedOut = held.count
            } else {
                handedOut = trigger
            }
        } else {
            handedOut = held.count
        }
        guard handedOut > 0 else { return .failure(.resourceTemporarilyUnavailable) }
        events += held[..<handedOut]
        held.removeFirst(handedOut)
        return .success(())
    }

    /// Held events are not pending: until the release arrives the queue looks as the real
    /// kernel's would before the overflow is read.
    func hasPendingEvents() -> Bool { real.hasPendingEvents() }

}
#endif
