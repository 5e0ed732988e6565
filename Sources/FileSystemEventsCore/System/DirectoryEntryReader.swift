import CFileSystemEventsShims
import PlatformLibc
package import SystemPackage

/// Lists directories straight from the kernel, for the walks that list thousands of them (a
/// polling scan, a kernel backend's crawl at `ready` and its rescans).
///
/// On Linux each batch is one `getdents64` into a 64 KiB buffer that the reader keeps for every
/// directory of a walk. `fdopendir` and `readdir` cost more per directory: an `fstat` and an
/// `fcntl` before the first read, and a 32 KiB stream allocated and freed, which across the
/// 10,000 directories of a 100k-entry tree measured 5% of a whole `statx` walk in C. Elsewhere
/// the reader lists through `readdir`, on a duplicate of the descriptor, and has no buffer.
///
/// A reader is not thread-safe: one walk, one reader.
package final class DirectoryEntryReader {
    /// One entry, valid only during the call it is handed to: its name points into the batch.
    package struct Entry {
        /// The NUL-terminated name.
        package let name: UnsafePointer<CChar>
        /// `d_type`: what the entry is, or `DT_UNKNOWN` where the file system does not say.
        package let type: UInt8
        /// `d_ino`: the inode the name links to (not the one mounted over it, for a mount point).
        package let inode: UInt64

        package var itemType: FileItemType { FileItemType(directoryEntryType: type) }
    }

    /// The call that lists, for error messages.
    #if os(Linux)
    package static let callName = "getdents64"
    #else
    package static let callName = "readdir"
    #endif

    #if os(Linux)
    private static let bufferSize = 64 * 1024
    private let buffer: UnsafeMutableRawPointer

    package init() {
        buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }
    #else
    package init() {}
    #endif

    /// Calls `body` for every entry of the directory open at `descriptor` but `.` and `..`, in
    /// the order the file system lists them. The descriptor stays open and the caller's.
    ///
    /// A directory removed while it is open lists as empty: the kernel then fails the read with
    /// `ENOENT`, which POSIX (and `readdir`) treat as the end of the listing.
    ///
    /// - Returns: the error that stopped the listing, if one did. `body` may have been called
    ///   for some entries before it: what to make of a listing cut short is the caller's call.
    package func forEachEntry(in descriptor: CInt, _ body: (Entry) -> Void) -> Result<Void, Errno> {
        #if os(Linux)
        let buffer = self.buffer
        while true {
            let filled: Int
            switch valueOrErrno(retryOnInterrupt: true, { cfse_read_directory_entries(descriptor, buffer, Self.bufferSize) }) {
            case .success(let count): filled = count
            case .failure(.noSuchFileOrDirectory): return .success(())
            case .failure(let errno): return .failure(errno)
            }
            if filled == 0 { return .success(()) }
            var offset = 0
            while offset < filled {
                guard let record = cfse_directory_record_at(buffer, offset) else { return .success(()) }
                let length = Int(record.pointee.record_length)
                if length == 0 { return .failure(.ioError) }  // a malformed batch would never end
                offset += length
                guard let name = cfse_directory_record_name(record) else { continue }
                if Self.isDotOrDotDot(name) { continue }
                body(Entry(name: name, type: record.pointee.type, inode: record.pointee.inode))
            }
        }
        #else
        // A duplicate that `closedir` can take, close-on-exec from the start.
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { return .failure(Errno(rawValue: errno)) }
        guard let stream = fdopendir(duplicate) else {
            let error = Errno(rawValue: errno)
            Syscalls.close(duplicate)
            return .failure(error)
        }
        defer { closedir(stream) }
        while true {
            errno = 0
            guard let dirent = readdir(stream) else {
                return errno == 0 ? .success(()) : .failure(Errno(rawValue: errno))
            }
            guard let name = cfse_dirent_name(dirent) else { continue }
            if Self.isDotOrDotDot(name) { continue }
            body(Entry(name: name, type: cfse_dirent_type(dirent), inode: UInt64(dirent.pointee.d_ino)))
        }
        #endif
    }

    @inline(__always)
    private static func isDotOrDotDot(_ name: UnsafePointer<CChar>) -> Bool {
        name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0))
    }
}
