import PlatformLibc
package import SystemPackage

/// The inotify sysctls under /proc/sys/fs/inotify: named in the errors that tell people which
/// one to raise, and sized against by the conformance suite's overflow scenario.
package enum InotifyLimits {
    /// The current value of `fs.inotify.<name>`, or `nil` where it cannot be read (no procfs,
    /// not Linux).
    package static func current(_ name: String) -> Int? {
        read("/proc/sys/fs/inotify/\(name)")
    }

    /// The limit on a user's inotify `watches` or `instances` in effect here, and the sysctl
    /// that sets it: `fs.inotify.max_user_<kind>`, or, in a user namespace (a rootless
    /// container) that allows fewer, its own `user.max_inotify_<kind>`. Only the first was
    /// read, so inside such a namespace an error named a limit of 192,536 and a sysctl whose
    /// raising changes nothing there, where the namespace allowed 10.
    package static func userLimit(_ kind: String) -> (value: Int, sysctl: String)? {
        let system = current("max_user_\(kind)")
        if let namespace = read("/proc/sys/user/max_inotify_\(kind)"), namespace < (system ?? .max) {
            return (namespace, "user.max_inotify_\(kind)")
        }
        return system.map { ($0, "fs.inotify.max_user_\(kind)") }
    }

    /// The sysctl to raise for a limit of `value` on `kind` (see ``userLimit(_:)``).
    package static func sysctl(for kind: String, limit value: Int?) -> String {
        if let value, let limit = userLimit(kind), limit.value == value { return limit.sysctl }
        return "fs.inotify.max_user_\(kind)"
    }

    private static func read(_ path: String) -> Int? {
        guard let file = fopen(path, "r") else { return nil }
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
            return .instanceLimitReached(currentLimit: userLimit("instances")?.value)
        }
        return .systemCallFailed(call: call, path: nil, errno: errno)
    }
}
