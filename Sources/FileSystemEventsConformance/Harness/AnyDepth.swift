import PlatformLibc
import SystemPackage
import FileSystemEventsCore

/// What the harness does to the disk at paths of any length: scenarios 41, 118 and 121 work
/// below PATH_MAX, where the kernel refuses a whole path with `ENAMETOOLONG`.
///
/// Each call goes through ``Syscalls/withParent(of:relativeTo:_:)``, which hands over a
/// directory descriptor and the *rest* of the path below it. That rest may hold several
/// components, so a second name must never be given relative to the same descriptor (a rename
/// so written lands in whichever directory the walk stopped at); two paths are resolved each on
/// its own.
enum AnyDepth {
    /// Opens `path` with `flags` (`O_CLOEXEC` added) and `mode` for a file it creates.
    static func open(_ path: [UInt8], flags: CInt, mode: mode_t = 0o644) throws -> CInt {
        let opened: Result<CInt, Errno> = Syscalls.withParent(of: path) { directory, name in
            valueOrErrno(retryOnInterrupt: true) { openat(directory, name, flags | O_CLOEXEC, mode) }
        }
        switch opened {
        case .success(let fd): return fd
        case .failure(let errno): throw ConformanceFailure("open \(describe(path)): \(errno)")
        }
    }

    /// Writes all of `content` to the file at `path`, made if missing; appended to it or
    /// replacing what it held.
    static func write(_ path: [UInt8], _ content: String, append: Bool = false) throws {
        try write(path, Array(content.utf8), flags: O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC))
    }

    /// Writes all of `content` to the file at `path`, opened with `flags`.
    static func write(_ path: [UInt8], _ content: [UInt8], flags: CInt) throws {
        let fd = try open(path, flags: flags)
        defer { close(fd) }
        var written = 0
        while written < content.count {
            let result = content[written...].withUnsafeBytes { Libc.write(fd, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                throw ConformanceFailure("write \(describe(path)): \(Errno(rawValue: errno))")
            }
            written += result
        }
    }

    /// `mkdir` of `path`.
    static func makeDirectory(_ path: [UInt8]) throws {
        try call("mkdir", path) { directory, name in mkdirat(directory, name, 0o755) }
    }

    /// `unlink` of the non-directory at `path`.
    static func remove(_ path: [UInt8]) throws {
        try call("unlink", path) { directory, name in unlinkat(directory, name, 0) }
    }

    /// `rename` of `source` to `destination`, each resolved in steps of its own.
    static func rename(_ source: [UInt8], to destination: [UInt8]) throws {
        let renamed: Result<CInt, Errno> = Syscalls.withParent(of: source) { sourceDirectory, sourceName in
            Syscalls.withParent(of: destination) { targetDirectory, targetName in
                valueOrErrno(retryOnInterrupt: true) { renameat(sourceDirectory, sourceName, targetDirectory, targetName) }
            }
        }
        if case .failure(let errno) = renamed {
            throw ConformanceFailure("rename \(describe(source)) to \(describe(destination)): \(errno)")
        }
    }

    /// Calls a libc function of a directory descriptor and a name for `path` (as
    /// ``ContentObservation`` reads a file's content): -1 with `errno` set where a step of
    /// the walk failed, as the function itself would.
    static func call(_ path: [UInt8], _ body: (CInt, UnsafePointer<CChar>) -> CInt) -> CInt {
        let result: Result<CInt, Errno> = Syscalls.withParent(of: path) { directory, name in
            let value = body(directory, name)
            return value == -1 ? .failure(Errno(rawValue: errno)) : .success(value)
        }
        switch result {
        case .success(let value): return value
        case .failure(let failure):
            errno = failure.rawValue
            return -1
        }
    }

    private static func call(_ what: String, _ path: [UInt8], _ body: (CInt, UnsafePointer<CChar>) -> CInt) throws {
        let result: Result<CInt, Errno> = Syscalls.withParent(of: path) { directory, name in
            valueOrErrno(retryOnInterrupt: true) { body(directory, name) }
        }
        if case .failure(let errno) = result { throw ConformanceFailure("\(what) \(describe(path)): \(errno)") }
    }

    /// The path for a failure message: its last 200 bytes, since a whole one can run to
    /// tens of kilobytes.
    private static func describe(_ path: [UInt8]) -> String {
        let tail = path.count > 200 ? [UInt8]("…".utf8) + path.suffix(200) : path
        return String(decoding: tail, as: UTF8.self)
    }
}
