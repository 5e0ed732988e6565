import FileSystemEventsCore
import SystemPackage

/// The followed path and the directories that must be watched to hear about it.
///
/// The follower watches the path's directory (not the file: a watch on the file would follow
/// the inode, not the name). While that directory does not exist it watches the nearest
/// existing ancestor and moves down as the missing levels appear. When the path is a symlink
/// whose target lives elsewhere, the target's directory is watched too, so appends to the
/// target are heard. When a directory on the way is a symlink (`current/app.log`, with
/// `current -> releases/v2`), the directory holding that link is watched too, so pointing it
/// elsewhere is heard at once: unheard, it was found by the once-a-second look, and the new
/// file's first bytes came 2 s late.
struct FollowedPath: Sendable {
    /// Absolute and lexically normalised.
    let bytes: [UInt8]
    /// The directory part of ``bytes``.
    let directory: [UInt8]

    init(_ path: FilePath) {
        bytes = WatchOptions.absolute(path).bytes
        directory = Self.parent(of: bytes)
    }

    /// The directories to watch now, as canonical paths, first the path's own directory (or
    /// its nearest existing ancestor).
    func watchRoots() -> [[UInt8]] {
        let (ancestor, isParent) = nearestExistingDirectory(from: directory)
        let own = Syscalls.realPath(ancestor) ?? ancestor
        var roots = [own]
        if own != ancestor {
            for holder in Self.directoriesHoldingLinks(on: ancestor) where holder != own && !roots.contains(holder) {
                roots.append(holder)
            }
        }
        guard isParent,
              case .success(let link) = FollowerSyscalls.status(bytes, followSymlinks: false),
              link.itemType == .symlink
        else { return roots }
        let targetDirectory: [UInt8]
        if let target = Syscalls.realPath(bytes) {
            targetDirectory = Self.parent(of: target)
        } else if let end = Self.endOfLinks(from: bytes) {
            // A dangling link: watch where its target would appear, at the end of the chain
            // (`current.log -> stable.log -> ../logs/app.log` dangles for a moment at each
            // rotation by rename; one link deep, that moment's watch left the logs out).
            let (existing, _) = nearestExistingDirectory(from: Self.parent(of: end))
            targetDirectory = Syscalls.realPath(existing) ?? existing
        } else {
            return roots
        }
        if targetDirectory != own { roots.append(targetDirectory) }
        return roots
    }

    /// The problem with the path a follower cannot wait out: an ancestor that exists but is
    /// not a directory, the path itself being a directory or a loop of symlinks, or a name
    /// longer than any file system takes. `nil` when the path can be followed.
    func startProblem() -> FileSystemEventsError? {
        // No file will ever be found by a name longer than `NAME_MAX` (a path of `PATH_MAX` or
        // more is walked in steps, and only fails so for such a name), so waiting for one would
        // wait for ever, in silence.
        func tooLong() -> FileSystemEventsError {
            .systemCallFailed(call: "stat", path: FilePath(bytes: bytes), errno: .fileNameTooLong)
        }
        var candidate = directory
        while true {
            switch FollowerSyscalls.status(candidate, followSymlinks: true) {
            case .success(let status):
                if status.itemType != .directory {
                    return .invalidOptions("cannot follow \(FilePath(bytes: bytes)): \(FilePath(bytes: candidate)) is not a directory")
                }
                switch FollowerSyscalls.status(bytes, followSymlinks: true) {
                case .success(let own) where own.itemType == .directory:
                    return .invalidOptions("cannot follow \(FilePath(bytes: bytes)): it is a directory; follow a file")
                case .failure(.fileNameTooLong):
                    return tooLong()
                case .failure(.tooManySymbolicLinkLevels):
                    // As `watch` and `list` answer for a root that is a loop of links.
                    return .invalidOptions("cannot follow \(FilePath(bytes: bytes)): it is a loop of symlinks (or a chain of more than 40); point it at a file")
                default:
                    return nil
                }
            case .failure(.noSuchFileOrDirectory):
                guard candidate.count > 1 else { return nil }
                candidate = Self.parent(of: candidate)
            case .failure(.notDirectory):
                // Some component above `candidate` is a file; keep climbing to name it.
                guard candidate.count > 1 else { return nil }
                candidate = Self.parent(of: candidate)
            case .failure(.permissionDenied):
                return .permissionDenied(FilePath(bytes: candidate), operation: "search")
            case .failure(.tooManySymbolicLinkLevels):
                return .invalidOptions("cannot follow \(FilePath(bytes: bytes)): \(FilePath(bytes: candidate)) is a loop of symlinks (or a chain of more than 40); point it at a directory")
            case .failure(.fileNameTooLong):
                return tooLong()
            case .failure:
                return nil
            }
        }
    }

    /// The directories, as canonical paths, that hold a symlink met on the way down `path` (an
    /// existing directory), each one this process may watch: resolved as the kernel resolves
    /// the path, component by component and link by link, so every link of a chain
    /// (`current -> links/stable -> ../releases/N`) is found where it stands.
    private static func directoriesHoldingLinks(on path: [UInt8]) -> [[UInt8]] {
        var holders: [[UInt8]] = []
        var links = 0
        _ = resolve(path, from: [UInt8(ascii: "/")], holders: &holders, links: &links)
        return holders
    }

    /// `path` resolved from the directory `start` (a canonical path), noting the directories
    /// that hold the links met; `nil` where it cannot be (a missing component, a loop).
    private static func resolve(_ path: [UInt8], from start: [UInt8], holders: inout [[UInt8]], links: inout Int) -> [UInt8]? {
        var current = path.first == UInt8(ascii: "/") ? [UInt8(ascii: "/")] : start
        for component in path.split(separator: UInt8(ascii: "/")) {
            if component.elementsEqual([UInt8(ascii: ".")]) { continue }
            if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                current = parent(of: current)
                continue
            }
            let candidate = current.count == 1 ? current + component : current + [UInt8(ascii: "/")] + component
            guard case .success(let status) = FollowerSyscalls.status(candidate, followSymlinks: false) else { return nil }
            guard status.itemType == .symlink else {
                current = candidate
                continue
            }
            links += 1
            guard links <= 40, let target = Syscalls.readLink(candidate) else { return nil }
            if !holders.contains(current) && FollowerSyscalls.canWatch(current) { holders.append(current) }
            guard let resolved = resolve(target, from: current, holders: &holders, links: &links) else { return nil }
            current = resolved
        }
        return current
    }

    /// Where `path` leads through every symlink it is (a chain `current.log -> stable.log ->
    /// ../logs/app.log`), each relative target taken from the directory of the link holding
    /// it, as the kernel does: `path` itself when it is no link. Not made canonical, and the
    /// place need not exist (a dangling link's target). `nil` for a loop (or a chain of more
    /// than 40, as `ELOOP`) or a link that cannot be read.
    static func endOfLinks(from path: [UInt8]) -> [UInt8]? {
        var location = path
        var links = 0
        while case .success(let status) = FollowerSyscalls.status(location, followSymlinks: false), status.itemType == .symlink {
            links += 1
            guard links <= 40, let target = Syscalls.readLink(location) else { return nil }
            location = target.first == UInt8(ascii: "/") ? target : parent(of: location).appendingComponent(target)
        }
        return location
    }

    /// The nearest directory at or above `start` that exists, and whether it is `start` itself.
    private func nearestExistingDirectory(from start: [UInt8]) -> (path: [UInt8], isStart: Bool) {
        var candidate = start
        while candidate.count > 1 {
            if case .success(let status) = FollowerSyscalls.status(candidate, followSymlinks: true), status.itemType == .directory {
                return (candidate, candidate == start)
            }
            candidate = Self.parent(of: candidate)
        }
        return ([UInt8(ascii: "/")], start == [UInt8(ascii: "/")])
    }

    /// The directory part of an absolute path (`/` for a top-level name).
    static func parent(of path: [UInt8]) -> [UInt8] {
        var end = path.count
        while end > 1 && path[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard let slash = path[..<end].lastIndex(of: UInt8(ascii: "/")) else { return [UInt8(ascii: ".")] }
        return slash == 0 ? [UInt8(ascii: "/")] : Array(path[..<slash])
    }
}
