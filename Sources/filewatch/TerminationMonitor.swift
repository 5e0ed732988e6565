import FileSystemEvents
import PlatformLibc

/// Ends the watch when the user or the reader of the output says so: the first SIGINT or
/// SIGTERM asks for a graceful stop (the watch flushes what it has and the command exits 0), a
/// second one exits at once, and a closed stdout (the reader went away: `filewatch | head`)
/// stops the watch, since nothing can be printed any more.
///
/// A graceful stop has ``gracePeriodMilliseconds`` to finish. A watch that cannot (its thread blocked in
/// `write(2)` to a reader that stopped reading, or stuck in any way) must still not outlive the
/// signal: the process then exits as the signal would have ended it, with one line on stderr.
///
/// Why not `DispatchSource.makeSignalSource`: it arms itself asynchronously, on a dispatch
/// queue, after the signal's disposition was set to ignore, so a signal sent right after the
/// `ready` line could land in between and be lost. Here `sigaction` installs a handler before
/// the initializer returns, and the handler only writes the signal's number into a pipe (all it
/// may do: `write(2)` is async-signal-safe). A thread of the monitor's own polls that pipe and
/// descriptor 1 together: a pipe or socket whose reader is gone reports `POLLERR`/`POLLHUP`
/// even with no events requested, so a closed stdout is noticed at once, not at the next event.
final class TerminationMonitor: Sendable {
    private let pipe: (read: CInt, write: CInt)

    /// How long a graceful stop may take after the first signal (milliseconds).
    static let gracePeriodMilliseconds: CInt = 2_000

    /// Installs the handlers and starts watching; both are in place when this returns.
    ///
    /// - Parameters:
    ///   - onFirstSignal: asks the watch to stop gracefully.
    ///   - onOutputClosed: stops the watch; called at most once.
    init(
        signals: [CInt] = [SIGINT, SIGTERM],
        onFirstSignal: @escaping @Sendable () -> Void,
        onOutputClosed: @escaping @Sendable () -> Void
    ) throws(CommandFailure) {
        switch Syscalls.pipe() {
        case .success(let fds): pipe = fds
        case .failure(let errno):
            // Before anything is watched: the status of a watch that could not start (2), as
            // for the same shortage met by the source itself.
            throw CommandFailure.badInput(FileSystemEventsError.systemCallFailed(call: "pipe (for signals)", path: nil, errno: errno).description)
        }
        signal(SIGPIPE, SIG_IGN)
        terminationSignalPipe = pipe.write
        let readEnd = pipe.read
        // The thread first, so no signal can wait in the pipe without a reader.
        let started = ProducerThread.start {
            Self.unblock(signals)
            Self.watch(signalPipe: readEnd, onFirstSignal: onFirstSignal, onOutputClosed: onOutputClosed)
        }
        guard started else {
            throw CommandFailure.badInput(FileSystemEventsError.systemCallFailed(call: "pthread_create", path: nil, errno: .resourceTemporarilyUnavailable).description)
        }
        for number in signals {
            var action = sigaction()
            #if canImport(Darwin)
            action.__sigaction_u.__sa_handler = forwardTerminationSignal
            #else
            action.__sigaction_handler.sa_handler = forwardTerminationSignal
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = CInt(SA_RESTART)
            sigaction(number, &action, nil)
        }
    }

    /// Lets `signals` reach the monitor's thread, whatever mask the process started with.
    ///
    /// A process inherits its parent's blocked signals, and some parents block SIGINT and
    /// SIGTERM in the thread that spawns (the CLI tests' runner does: `SigBlk` in
    /// `/proc/PID/status` has both). Every thread of ours inherits that mask in turn, so the
    /// signal that should stop the watch stayed pending for ever. An `async` `main` had hidden
    /// this: the main thread it ends in `dispatch_main()` showed an empty mask, and the signal
    /// got through; ``MainThreadExecutor`` keeps that thread, with the inherited mask.
    /// Unblocked on this thread only, a signal sent to the process is handled here, on a
    /// thread that does nothing else.
    private static func unblock(_ signals: [CInt]) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The monitor's thread: counts signals and watches descriptor 1 until the process exits.
    private static func watch(signalPipe: CInt, onFirstSignal: @Sendable () -> Void, onOutputClosed: @Sendable () -> Void) {
        var descriptors = [pollfd(fd: signalPipe, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: 1, events: 0, revents: 0)]
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 16)
        // After the first signal: when the graceful stop's time is up, and the signal.
        var deadline: (at: UInt64, signal: CInt)?
        while true {
            var timeout: CInt = -1
            if let deadline {
                let now = MonotonicClock.nanoseconds()
                guard now < deadline.at else {
                    let line = "filewatch: the watch did not stop within \(gracePeriodMilliseconds / 1000) s of signal \(deadline.signal); exiting\n"
                    _ = line.withCString { write(2, $0, strlen($0)) }
                    exit(128 + deadline.signal)
                }
                timeout = MonotonicClock.pollTimeout(from: now, until: deadline.at)
            }
            let ready = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            let output = descriptors[1].revents
            if output & Int16(POLLNVAL) != 0 {
                descriptors[1].fd = -1  // no stdout at all: nothing to watch
            } else if output & Int16(POLLERR | POLLHUP) != 0 {
                descriptors[1].fd = -1
                onOutputClosed()
            }
            if descriptors[0].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(signalPipe, $0.baseAddress, $0.count) }
                if count <= 0 { continue }
                for number in buffer[..<count] {
                    received += 1
                    if received == 1 {
                        deadline = (MonotonicClock.nanoseconds() + UInt64(gracePeriodMilliseconds) * 1_000_000, CInt(number))
                        onFirstSignal()
                    } else {
                        exit(128 + CInt(number))
                    }
                }
            }
        }
    }
}

/// The write end of the monitor's pipe, for the signal handler (set before it is installed;
/// a process has one monitor).
nonisolated(unsafe) private var terminationSignalPipe: CInt = -1

/// The signal handler: one byte with the signal's number into the pipe, `errno` preserved.
private let forwardTerminationSignal: @convention(c) (CInt) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(terminationSignalPipe, &byte, 1)
    errno = saved
}
