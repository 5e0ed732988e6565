import FileSystemEventsCore

/// The open file limit below which filewatch does not start.
///
/// The Swift runtime's libdispatch opens descriptors of its own, lazily, from its own
/// threads, and traps (SIGILL) when none is free: its event loop (an epoll instance and an
/// eventfd) and a timerfd per clock at the first timer, the main queue's eventfd, and, once a
/// second or so, a file of `/proc/self/task` that its thread pool's monitor reads. Under a
/// limit that leaves it too few beside the watch's own pipes, inotify instance and scanned
/// directories, which of the two gets the last descriptor is a matter of thread timing: the
/// same `ulimit -n` ended in a one-line error ("raise the open file limit") in one run and in
/// a crash in the next. Below this limit filewatch says so and opens nothing, so a shortage
/// is reported the same way every time; it is far below any system's default (1,024).
enum OpenFileLimit {
    /// Three standard streams, five of libdispatch's (epoll, its eventfd, two timerfds, the
    /// main queue's eventfd) and one its monitor opens for a moment, and the watch's own:
    /// the signal pipe, the wakeup pipe, the inotify instance and the directories being
    /// scanned, with room for the watch to report a shortage itself.
    static let minimum: UInt64 = 16

    /// Throws, naming the limit, when the soft open file limit is below ``minimum``.
    static func check() throws(CommandFailure) {
        guard case .success(let limit) = Syscalls.openFileLimit(), limit < minimum else { return }
        throw CommandFailure.failed(
            "the open file limit is \(limit), and filewatch needs at least \(minimum) "
                + "(the runtime keeps some descriptors of its own); raise the open file limit (`ulimit -n`)")
    }
}
