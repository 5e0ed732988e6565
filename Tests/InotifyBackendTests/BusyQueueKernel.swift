#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Synchronization
import SystemPackage

/// The real kernel, except that its queue looks busy on every other question, for the first
/// ``busyAnswers`` of them: what a watch sees while a writer keeps creating files as fast as
/// it reads them. It counts how often each name was looked at (with no busy answers, that is
/// all it changes).
struct BusyQueueKernel: RealKernelWrapper {
    /// How often each name was looked at, shared with the test.
    final class Counts: Sendable {
        let byName = Mutex<[[UInt8]: Int]>([:])
        let busyAnswers = Atomic<Int>(0)
        let questions = Atomic<Int>(0)
    }

    var real: RawInotifyKernel
    private let counts: Counts
    private let busyAnswers: Int

    init(counts: Counts, busyAnswers: Int = 40) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.counts = counts
        self.busyAnswers = busyAnswers
    }

    func hasPendingEvents() -> Bool {
        let question = counts.questions.add(1, ordering: .relaxed).newValue
        if question <= busyAnswers && question % 2 == 0 {
            counts.busyAnswers.add(1, ordering: .relaxed)
            return true
        }
        return real.hasPendingEvents()
    }

    func status(of name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool) -> Result<FileStatus, Errno> {
        let bytes = Array(String(cString: name).utf8)
        counts.byName.withLock { $0[bytes, default: 0] += 1 }
        return real.status(of: name, relativeTo: directory, followSymlinks: followSymlinks)
    }
}
#endif
