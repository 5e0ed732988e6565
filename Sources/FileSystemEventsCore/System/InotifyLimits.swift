import PlatformLibc
package import SystemPackage

/// The inotify sysctls under /proc/sys/fs/inotify: named in the errors that tell people which
/// one to raise, and sized against by the conformance suite's overflow scenario.
package enum InotifyLimits {
    /// The current value of `fs.inotify.<name>`, or `nil` where it cannot be read (no procfs,
    /// not Linux).
    package static func current(_ name: String) -> Int? {
        guard let file = fopen("/proc/sys/fs/inotify/\(name)", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 32)
        guard fgets(&buffer, 32, file) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int(text)
    }

    /// The error for an inotify instance that could not be created. `EMFILE` means either of
    /// two limits, the user's inotify instances (`fs.inotify.max_user_instances`) or the
    /// process's descriptors (`ulimit -n`), and the remedies differ: opening `/` tells them
    /// apart, since only the second stops that too.
    package static func initializationError(_ errno: Errno, call: String) -> FileSystemEventsError {
        guard FileSystemEventsError.isDescriptorShortage(errno) else {
            return .systemCallFailed(call: call, path: nil, errno: errno)
        }
        if errno == .tooManyOpenFiles, case .success(let probe) = Syscalls.open(atPath: Array("/".utf8), flags: O_RDONLY | O_DIRECTORY) {
            Syscalls.close(probe)
            return .instanceLimitReached(currentLimit: current("max_user_instances"))
        }
        return .systemCallFailed(call: call, path: nil, errno: errno)
    }
}
