import PlatformLibc
import SystemPackage

// A path that is a symlink names two places: the link, and the file its target is. What is
// watched by name must watch both, because a write through the target's other names changes
// what the link shows, and the link re-pointed changes which file that is.

extension Syscalls {
    /// The canonical absolute path of `path` (every symlink resolved), or `nil` when some
    /// component does not exist or cannot be searched.
    ///
    /// A path of `PATH_MAX` bytes or more, which `realpath(3)` refuses, is returned as it is
    /// where something exists there: not canonical, but the place to watch.
    package static func realPath(_ path: [UInt8]) -> [UInt8]? {
        let resolved = withCString(path) { name -> [UInt8]? in
            guard let resolved = realpath(name, nil) else { return nil }
            defer { free(resolved) }
            return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
        }
        if resolved == nil && path.count >= Int(PATH_MAX), case .success = status(atPath: path, followSymlinks: true) { return path }
        return resolved
    }

    /// The target a symlink holds, or `nil` when `path` is not a readable symlink, however long
    /// `path` is (``withParent(of:relativeTo:_:)``).
    package static func readLink(_ path: [UInt8]) -> [UInt8]? {
        let read = withParent(of: path) { directory, name -> Result<[UInt8], Errno> in
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
            return buffer.withUnsafeMutableBufferPointer { target in
                target.withMemoryRebound(to: CChar.self) { characters -> Result<Int, Errno> in
                    guard let base = characters.baseAddress else { return .failure(.invalidArgument) }
                    return valueOrErrno(retryOnInterrupt: true) { readlinkat(directory, name, base, characters.count) }
                }
            }.map { count in Array(buffer[..<count]) }
        }
        guard case .success(let target) = read, !target.isEmpty else { return nil }
        return target
    }

    /// Where the file a symlink leads to lives, as its directory's canonical path and its
    /// name there: through every link when the target exists, and one link deep when it does
    /// not (a dangling link's target would appear there). When the target's directory does not
    /// exist either, the nearest existing ancestor and the name of the missing level below it,
    /// whose appearance is the first step of the target's. `nil` when `path` is not a symlink.
    package static func linkTargetLocation(_ path: [UInt8]) -> (directory: [UInt8], name: [UInt8])? {
        guard case .success(let status) = Syscalls.status(atPath: path), status.itemType == .symlink else { return nil }
        if let resolved = realPath(path) { return split(resolved) }
        guard let target = readLink(path) else { return nil }
        var (directory, name) = split(target.first == UInt8(ascii: "/") ? target : split(path).directory + [UInt8(ascii: "/")] + target)
        while !name.isEmpty {
            if let canonical = realPath(directory) { return (canonical, name) }
            guard directory.count > 1 else { return nil }
            (directory, name) = split(directory)
        }
        return nil
    }

    /// An absolute path's directory (`/` at the top) and last component.
    private static func split(_ path: [UInt8]) -> (directory: [UInt8], name: [UInt8]) {
        var end = path.count
        while end > 1 && path[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard let slash = path[..<end].lastIndex(of: UInt8(ascii: "/")) else { return ([UInt8(ascii: ".")], Array(path[..<end])) }
        return (slash == 0 ? [UInt8(ascii: "/")] : Array(path[..<slash]), Array(path[(slash + 1)..<end]))
    }
}
