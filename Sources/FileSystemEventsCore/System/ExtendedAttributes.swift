import CFileSystemEventsShims
package import SystemPackage

extension Syscalls {
    /// The value of the extended attribute `name` of the item at `path` (a final symlink not
    /// followed); `nil` when the item has no such attribute.
    package static func extendedAttribute(_ name: String, of path: [UInt8], maximumSize: Int = 256) -> Result<[UInt8]?, Errno> {
        var value = [UInt8](repeating: 0, count: maximumSize)
        let result = withCString(path) { pathPointer in
            value.withUnsafeMutableBytes { buffer in
                valueOrErrno(retryOnInterrupt: true) { cfse_get_xattr(pathPointer, name, buffer.baseAddress, buffer.count) }
            }
        }
        switch result {
        case .success(let count): return .success(Array(value.prefix(Int(count))))
        case .failure(.noData): return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// Sets the extended attribute `name` of the item at `path` (a final symlink not
    /// followed). With `createOnly`, fails with `EEXIST` where the item has one already, so
    /// that two writers never overwrite each other's value.
    package static func setExtendedAttribute(_ name: String, of path: [UInt8], to value: [UInt8], createOnly: Bool) -> Result<Void, Errno> {
        withCString(path) { pathPointer in
            value.withUnsafeBytes { buffer in
                valueOrErrno(retryOnInterrupt: true) { cfse_set_xattr(pathPointer, name, buffer.baseAddress, buffer.count, createOnly ? 1 : 0) }
            }
        }.map { _ in () }
    }
}
