import FileSystemEventsCore
import PlatformLibc
import SystemPackage

/// Keeps descriptors 0, 1 and 2 taken for the standard streams before anything else opens one.
///
/// Started with one of them closed (`filewatch watch d <&- >&-`, as some service managers and
/// scripts do), the process handed the number to whatever it opened first: the signal pipe
/// took 0 and 1, the JSON Lines went into that pipe, and the signal thread read them back and
/// exited with a byte of JSON as its status (162). Each closed one is opened on `/dev/null`
/// here, as daemons do: stdin and stderr as the empty source and sink they stand for, stdout
/// read-only, so that the first line written fails with `EBADF` and the command ends with the
/// one-line error a closed stdout deserves, rather than reporting into nothing.
enum StandardDescriptors {
    static func reserve() {
        for descriptor in CInt(0)...2 where !Syscalls.isOpen(descriptor) {
            // The lowest free number is `descriptor` itself: those below it are open.
            let flags = descriptor == 2 ? O_WRONLY : O_RDONLY
            guard case .success(let opened) = Syscalls.open(FilePath("/dev/null"), flags: flags) else { return }
            if opened != descriptor { Syscalls.close(opened) }
        }
    }
}
