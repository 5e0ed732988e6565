#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Synchronization
import SystemPackage

/// The real kernel, except that `inotify_add_watch` starts failing, the way a system out of
/// `fs.inotify.max_user_watches` does, once its budget of successes is spent.
struct FailingAddWatchKernel: RealKernelWrapper {
    /// How many more watches may be added before every add fails; shared with the test, which
    /// may spend it down to zero while a watch runs.
    final class Budget: Sendable {
        private let remaining: Mutex<Int>
        let error: Errno

        init(successes: Int, error: Errno = .noSpace) {
            remaining = Mutex(successes)
            self.error = error
        }

        /// No more successes from now on.
        func exhaust() { remaining.withLock { $0 = 0 } }

        func spend() -> Bool {
            remaining.withLock { remaining in
                guard remaining > 0 else { return false }
                remaining -= 1
                return true
            }
        }
    }

    var real: RawInotifyKernel
    private let budget: Budget

    init(budget: Budget) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.budget = budget
    }

    mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        guard budget.spend() else { return .failure(budget.error) }
        return real.addWatch(path: path, mask: mask)
    }
}

extension InotifyEventSource {
    /// A watch whose `inotify_add_watch` fails once `budget` is spent.
    static func updates(options: WatchOptions, addWatchBudget budget: FailingAddWatchKernel.Budget) -> FileSystemEventStream {
        updates(options: options) { () throws(FileSystemEventsError) in try FailingAddWatchKernel(budget: budget) }
    }
}
#endif
