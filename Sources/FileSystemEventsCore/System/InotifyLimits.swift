import PlatformLibc

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
}
