import FileSystemEventsCore
import PlatformLibc
public import SystemPackage
import Synchronization

/// A private temporary directory holding the watched root and, beside it, an `outside`
/// directory to move items into and out of the watched tree.
///
/// Every operation is one system call on raw bytes (no Foundation), so names that are not
/// valid UTF-8 work, and the test performs exactly the operation its name says: `rename` is
/// one `rename(2)`, never a copy and delete.
public final class ScratchTree: Sendable {
    /// The temporary directory that holds `root` and `outside`.
    public let base: FilePath
    /// The watched root, `base/root`.
    public let root: FilePath
    /// A sibling of the root that is not watched.
    public let outside: FilePath

    private let numbers = Atomic<Int>(0)

    /// A number not handed out before on this tree, for harness files that must not collide
    /// across the watches a scenario starts on it.
    public func uniqueNumber() -> Int {
        numbers.add(1, ordering: .relaxed).newValue
    }

    /// Which of the two directories a path is relative to.
    public enum Area: Sendable {
        /// The watched root (``ScratchTree/root``).
        case root
        /// The unwatched sibling (``ScratchTree/outside``), for moving items into and out of the tree.
        case outside
    }

    /// Makes a private directory under `TMPDIR` (or `/tmp`) holding empty `root` and `outside`;
    /// it is deleted with everything in it when the tree is released.
    public init() throws {
        let template = Array((Self.temporaryDirectory() + "/filewatch-conformance-XXXXXX").utf8CString)
        var buffer = template
        guard let made = mkdtemp(&buffer) else {
            throw ConformanceFailure("mkdtemp failed: \(Errno(rawValue: errno))")
        }
        base = FilePath(platformString: made)
        root = base.appending("root")
        outside = base.appending("outside")
        try Self.call("mkdir root") { mkdir(rootBytesPath(base, "root"), 0o755) }
        try Self.call("mkdir outside") { mkdir(rootBytesPath(base, "outside"), 0o755) }
    }

    deinit {
        remove()
    }

    private let isRemoved = Atomic<Bool>(false)

    /// Deletes the tree with everything in it, now (once; the tree is unusable afterwards).
    ///
    /// A scenario's runner calls this as it ends rather than leaving it to the release of the
    /// last reference, which may be a task finishing on another thread while the next scenario
    /// runs: deleting a large tree opens its directories one by one, and a scenario that counts
    /// the process's descriptors saw one of them as its own leak.
    public func remove() {
        guard !isRemoved.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? Self.removeTree(absolute: bytes(of: base))
    }

    /// The absolute path of `path` in `area`.
    public func path(_ path: RelativePath, in area: Area = .root) -> FilePath {
        withC(absolute(path, in: area)) { FilePath(platformString: $0) }
    }

    // MARK: Operations

    /// Creates the file or truncates it, then writes `content`: an existing file keeps its
    /// identity.
    public func write(_ path: RelativePath, _ content: String = "", in area: Area = .root) throws {
        try writeBytes(path, Array(content.utf8), flags: O_WRONLY | O_CREAT | O_TRUNC, in: area)
    }

    /// Appends `content` to a file that must exist already (`O_APPEND`, no `O_CREAT`).
    public func append(_ path: RelativePath, _ content: String, in area: Area = .root) throws {
        try writeBytes(path, Array(content.utf8), flags: O_WRONLY | O_APPEND, in: area)
    }

    /// One `mkdir(2)`, mode 0755: the parent must exist (see ``makeDirectories(_:in:)``).
    public func makeDirectory(_ path: RelativePath, in area: Area = .root) throws {
        let target = absolute(path, in: area)
        try Self.call("mkdir \(path)") { withC(target) { mkdir($0, 0o755) } }
    }

    /// `mkdir -p`.
    public func makeDirectories(_ path: RelativePath, in area: Area = .root) throws {
        var prefix = RelativePath.root
        for component in path.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            prefix = prefix / RelativePath(bytes: Array(component))
            let target = absolute(prefix, in: area)
            let result = withC(target) { mkdir($0, 0o755) }
            if result != 0 && errno != EEXIST {
                throw ConformanceFailure("mkdir -p \(path): \(Errno(rawValue: errno))")
            }
        }
    }

    /// One `rename(2)`, within an area or from one to the other.
    public func rename(_ from: RelativePath, to: RelativePath, from fromArea: Area = .root, to toArea: Area = .root) throws {
        let source = absolute(from, in: fromArea)
        let destination = absolute(to, in: toArea)
        try Self.call("rename \(from) -> \(to)") {
            withC(source) { s in withC(destination) { d in Libc.rename(s, d) } }
        }
    }

    /// One `unlink(2)`: a file, a symlink, anything but a directory.
    public func remove(_ path: RelativePath, in area: Area = .root) throws {
        let target = absolute(path, in: area)
        try Self.call("unlink \(path)") { withC(target) { unlink($0) } }
    }

    /// One `rmdir(2)`: the directory must be empty (see ``removeTree(_:in:)``).
    public func removeDirectory(_ path: RelativePath, in area: Area = .root) throws {
        let target = absolute(path, in: area)
        try Self.call("rmdir \(path)") { withC(target) { rmdir($0) } }
    }

    /// `rm -rf`.
    public func removeTree(_ path: RelativePath, in area: Area = .root) throws {
        try Self.removeTree(absolute: absolute(path, in: area))
    }

    /// One `chmod(2)`, which follows a symlink.
    public func changeMode(_ path: RelativePath, to mode: UInt32, in area: Area = .root) throws {
        let target = absolute(path, in: area)
        try Self.call("chmod \(path)") { withC(target) { chmod($0, mode_t(mode)) } }
    }

    /// Makes a symlink at `path` whose content is `target`, exactly as given; the target need
    /// not exist.
    public func symlink(_ path: RelativePath, pointingTo target: String, in area: Area = .root) throws {
        let link = absolute(path, in: area)
        try Self.call("symlink \(path)") { withC(link) { l in Libc.symlink(target, l) } }
    }

    /// Makes a FIFO at `path` (`mkfifo(3)`, mode 0644): an item with no content to write, whose
    /// attributes change all the same.
    public func makeFIFO(_ path: RelativePath, in area: Area = .root) throws {
        let target = absolute(path, in: area)
        try Self.call("mkfifo \(path)") { withC(target) { mkfifo($0, 0o644) } }
    }

    /// Sets the access and modification times of the item at `path` itself to `seconds` since
    /// the epoch, in one `utimensat(2)` with `AT_SYMLINK_NOFOLLOW` (`touch -h -d`): a symlink's
    /// own times, not its target's. A time in the past, as `touch -d` or an unpacked archive
    /// sets, is one no "changed since" comparison of modification times can find.
    public func setTimes(_ path: RelativePath, seconds: Int, in area: Area = .root) throws {
        let time = timespec(tv_sec: time_t(seconds), tv_nsec: 0)
        try setTimes(path, access: time, modification: time, in: area)
    }

    /// One `utimensat(2)` with `AT_SYMLINK_NOFOLLOW` on the item at `path` itself.
    private func setTimes(_ path: RelativePath, access: timespec, modification: timespec, in area: Area) throws {
        let target = absolute(path, in: area)
        let times = [access, modification]
        try Self.call("utimensat \(path)") {
            withC(target) { pointer in times.withUnsafeBufferPointer { utimensat(AT_FDCWD, pointer, $0.baseAddress, AT_SYMLINK_NOFOLLOW) } }
        }
    }

    /// Swaps the items at two paths in one `renameat2(RENAME_EXCHANGE)`. Throws
    /// ``ConformanceSkip`` where the kernel or file system has no exchange, so the scenario is
    /// skipped with that reason rather than failed.
    ///
    /// - Parameter secondArea: where `second` is, when not in `area` (an exchange across the
    ///   root's edge).
    public func exchange(_ first: RelativePath, _ second: RelativePath, in area: Area = .root, secondIn secondArea: Area? = nil) throws {
        switch Syscalls.exchange(absolute(first, in: area), absolute(second, in: secondArea ?? area)) {
        case .success: return
        case .failure(let errno) where errno == .noFunction || errno == .invalidArgument:
            throw ConformanceSkip("this kernel or file system has no renameat2(RENAME_EXCHANGE) (\(errno))")
        case .failure(let errno): throw ConformanceFailure("renameat2 \(first) <-> \(second): \(errno)")
        }
    }

    /// Gives the item at `existing` a second name, `path` (`link(2)`): both in `area`, or
    /// `existing` in `existingArea` when given (a name made outside the tree for a file in it).
    public func hardLink(_ path: RelativePath, to existing: RelativePath, in area: Area = .root, existingIn existingArea: Area? = nil) throws {
        let source = absolute(existing, in: existingArea ?? area)
        let link = absolute(path, in: area)
        try Self.call("link \(path)") { withC(source) { s in withC(link) { l in Libc.link(s, l) } } }
    }

    /// Rewrites a file in place with `content` and then puts its access and modification times
    /// back, as `cp -p`, `rsync -t` and `touch -r` do: with content of the same length, only
    /// the change time (which no one can set) tells the rewrite apart.
    public func rewriteKeepingTimes(_ path: RelativePath, _ content: String, in area: Area = .root) throws {
        let target = absolute(path, in: area)
        var info = stat()
        try Self.call("lstat \(path)") { withC(target) { lstat($0, &info) } }
        try writeBytes(path, Array(content.utf8), flags: O_WRONLY | O_TRUNC, in: area)
        try setTimes(path, access: info.st_atim, modification: info.st_mtim, in: area)
    }

    /// Whether two names are links to one file (`rename(2)` between them does nothing).
    public func isSameFile(_ first: RelativePath, _ second: RelativePath, in area: Area = .root) -> Bool {
        var one = stat()
        var two = stat()
        guard withC(absolute(first, in: area), { lstat($0, &one) }) == 0,
            withC(absolute(second, in: area), { lstat($0, &two) }) == 0
        else { return false }
        return one.st_dev == two.st_dev && one.st_ino == two.st_ino
    }

    /// How many names the item has (0 if there is none at `path`).
    public func linkCount(_ path: RelativePath, in area: Area = .root) -> Int {
        var info = stat()
        guard withC(absolute(path, in: area), { lstat($0, &info) }) == 0 else { return 0 }
        return Int(info.st_nlink)
    }

    /// Whether anything stands at `path`, without following a symlink: a dangling link exists.
    public func exists(_ path: RelativePath, in area: Area = .root) -> Bool {
        var info = stat()
        return withC(absolute(path, in: area)) { lstat($0, &info) } == 0
    }

    /// The content of a file, for checks.
    public func read(_ path: RelativePath, in area: Area = .root) throws -> [UInt8] {
        let fd = withC(absolute(path, in: area)) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw ConformanceFailure("open \(path): \(Errno(rawValue: errno))") }
        defer { close(fd) }
        return DiskTree.readAll(fd)
    }

    // MARK: Helpers

    package func absolute(_ path: RelativePath, in area: Area) -> [UInt8] {
        var bytes = self.bytes(of: area == .root ? root : outside)
        if !path.bytes.isEmpty {
            bytes.append(UInt8(ascii: "/"))
            bytes.append(contentsOf: path.bytes)
        }
        return bytes
    }

    func bytes(of path: FilePath) -> [UInt8] {
        path.withPlatformString { pointer in
            Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
        }
    }

    private func writeBytes(_ path: RelativePath, _ content: [UInt8], flags: CInt, in area: Area) throws {
        // At any depth: a marker below a root longer than PATH_MAX (scenario 121).
        try AnyDepth.write(absolute(path, in: area), content, flags: flags)
    }

    private static func call(_ what: @autoclosure () -> String, _ body: () -> CInt) throws {
        if body() != 0 { throw ConformanceFailure("\(what()): \(Errno(rawValue: errno))") }
    }

    /// Removes whatever is at `path`, a directory with everything in it.
    ///
    /// By descriptors, each level relative to the one above: by paths, a tree deeper than
    /// PATH_MAX (scenario 41's) was left behind in the temporary directory after every run.
    static func removeTree(absolute path: [UInt8]) throws {
        var failure: (any Error)?
        _ = Syscalls.withParent(of: path) { directory, name -> Result<Void, Errno> in
            do {
                try removeEntry(Array(UnsafeRawBufferPointer(start: name, count: strlen(name))), in: directory)
            } catch {
                failure = error
            }
            return .success(())
        }
        if let failure { throw failure }
    }

    /// Removes `name` in the directory open at `parent` (or `AT_FDCWD`), with everything in it.
    private static func removeEntry(_ name: [UInt8], in parent: CInt) throws {
        var info = stat()
        guard withC(name, { fstatat(parent, $0, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            try call("unlink") { withC(name) { unlinkat(parent, $0, 0) } }
            return
        }
        // Make sure we may list and empty it, even if a scenario made it unreadable.
        _ = withC(name) { fchmodat(parent, $0, 0o700, 0) }
        let directory = withC(name) { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        if directory >= 0 {
            defer { close(directory) }
            for child in DiskTree.names(inDescriptor: directory) { try removeEntry(child, in: directory) }
        }
        try call("rmdir") { withC(name) { unlinkat(parent, $0, AT_REMOVEDIR) } }
    }

    private static func temporaryDirectory() -> String {
        if let value = getenv("TMPDIR"), value.pointee != 0 { return String(cString: value) }
        return "/tmp"
    }
}

private func rootBytesPath(_ base: FilePath, _ name: String) -> String {
    base.appending(name).string
}

/// Calls `body` with `bytes` as a NUL-terminated C string.
func withC<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    var terminated = bytes
    terminated.append(0)
    return terminated.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
    }
}
