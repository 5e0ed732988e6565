import CFileSystemEventsShims
package import SystemPackage

extension Syscalls {
    /// The value of the extended attribute `name` of the item at `path` (a final symlink not
    /// followed), however long the path is; `nil` when the item has no such attribute.
    package static func extendedAttribute(_ name: String, of path: [UInt8], maximumSize: Int = 256) -> Result<[UInt8]?, Errno> {
        var value = [UInt8](repeating: 0, count: maximumSize)
        let result = withAttributePath(path) { pathPointer, follow in
            value.withUnsafeMutableBytes { buffer in
                valueOrErrno(retryOnInterrupt: true) { cfse_get_xattr(pathPointer, name, buffer.baseAddress, buffer.count, follow ? 1 : 0) }
            }
        }
        switch result {
        case .success(let count): return .success(Array(value.prefix(Int(count))))
        case .failure(.noData): return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// Sets the extended attribute `name` of the item at `path` (a final symlink not
    /// followed), however long the path is. With `createOnly`, fails with `EEXIST` where the
    /// item has one already, so that two writers never overwrite each other's value.
    package static func setExtendedAttribute(_ name: String, of path: [UInt8], to value: [UInt8], createOnly: Bool) -> Result<Void, Errno> {
        withAttributePath(path) { pathPointer, follow in
            value.withUnsafeBytes { buffer in
                valueOrErrno(retryOnInterrupt: true) {
                    cfse_set_xattr(pathPointer, name, buffer.baseAddress, buffer.count, createOnly ? 1 : 0, follow ? 1 : 0)
                }
            }
        }.map { _ in () }
    }

    /// Calls `body` with a path to the item at `path` that the kernel takes in one call, and
    /// whether it must be followed: `path` itself (not followed) when it is short enough;
    /// beyond ``longPathStep``, `/proc/self/fd/N` of an `O_PATH` descriptor of the item
    /// (which is followed to the item, a symlink not followed past), reached a few components
    /// at a time (``withParent(of:relativeTo:_:)``). The `*xattr` calls take no descriptor
    /// and name (`getxattrat` is Linux 6.13's), and `fgetxattr` refuses an `O_PATH`
    /// descriptor; a descriptor opened to read would fire the tree's watches, block on a FIFO
    /// and need read permission to set a value. Without `/proc`, a long path fails as before.
    private static func withAttributePath<T>(
        _ path: [UInt8],
        _ body: (UnsafePointer<CChar>, _ follow: Bool) -> Result<T, Errno>
    ) -> Result<T, Errno> {
        guard path.count >= longPathStep else {
            return withCString(path) { body($0, false) }
        }
        return withParent(of: path) { directory, name in
            switch openPathOnly(name, relativeTo: directory, followSymlinks: false) {
            case .failure(let errno):
                return .failure(errno)
            case .success(let descriptor):
                defer { _ = close(descriptor) }
                return withCString(processDescriptorPath(descriptor)) { body($0, true) }
            }
        }
    }
}
