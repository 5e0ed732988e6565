import Dispatch
import Synchronization

/// Runs the command's async code on the process's main thread, which waits here for its jobs.
///
/// Why not an `async` `main`: the runtime then ends the main thread with `dispatch_main()`,
/// which calls `pthread_exit`, and glibc unwinds that thread's stack through libgcc. The
/// unwinder reads the binary's `.eh_frame_hdr` and `.eh_frame` tables, about 650 KiB that
/// then stay resident for the life of the watch (measured on the deployment build watching an
/// empty directory: 9,220 against 8,540 KiB with the main thread parked instead; see
/// `scripts/peers/resident-pages.py`). Nothing else in a watch ever unwinds.
///
/// Why not a `Task.detached` and a main thread parked in `pause()`: the main thread would only
/// wait, and the command's async code would start the cooperative pool's threads (as many as
/// processors) for work that is sequential. Here the jobs of the task started with ``run(_:)``
/// (and of its child tasks, which inherit the preference) run on the main thread, one at a
/// time, in the order they were enqueued, and the pool never starts; code isolated to an actor
/// still runs on that actor's executor. (A first try with a detached task hung at SIGINT; the
/// cause was the inherited signal mask, which ``TerminationMonitor`` now clears on its thread.)
final class MainThreadExecutor: TaskExecutor {
    private let jobs = Mutex<[UnownedJob]>([])
    /// Signalled once per job enqueued, and once more when the command's task has ended.
    private let available = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// Runs `body` as a task that prefers this executor, and runs that task's jobs on the
    /// calling thread until `body` returns. Call it from the main thread, once.
    static func run(_ body: @escaping @Sendable () async -> Void) {
        let executor = MainThreadExecutor()
        Task(executorPreference: executor) {
            await body()
            executor.available.signal()
        }
        executor.drain()
    }

    /// Runs jobs as they come, one per wake-up; returns at the wake-up that finds none, which
    /// is the one the end of the command's task sent (every job's own signal follows it into
    /// the queue, so a wake-up for a job always finds one).
    private func drain() {
        while true {
            available.wait()
            let next = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            guard let job = next else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
