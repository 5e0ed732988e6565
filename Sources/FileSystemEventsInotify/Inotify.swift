#if os(Linux)
import Glibc
import FileSystemEventsCore
package import SystemPackage

/// The inotify(7) system calls, wrapped once: `EINTR` retried, failures as `Errno`.
///
/// Glibc imports `struct inotify_event` without its flexible `name` member and does not import
/// `IN_ALL_EVENTS`, so the masks are spelled out here and events are parsed from raw bytes.
package enum Inotify {
    package struct Mask: OptionSet, Sendable, Hashable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }

        package static let access = Mask(rawValue: 0x0000_0001)
        package static let modify = Mask(rawValue: 0x0000_0002)
        package static let attrib = Mask(rawValue: 0x0000_0004)
        package static let closeWrite = Mask(rawValue: 0x0000_0008)
        package static let closeNoWrite = Mask(rawValue: 0x0000_0010)
        package static let open = Mask(rawValue: 0x0000_0020)
        package static let movedFrom = Mask(rawValue: 0x0000_0040)
        package static let movedTo = Mask(rawValue: 0x0000_0080)
        package static let create = Mask(rawValue: 0x0000_0100)
        package static let delete = Mask(rawValue: 0x0000_0200)
        package static let deleteSelf = Mask(rawValue: 0x0000_0400)
        package static let moveSelf = Mask(rawValue: 0x0000_0800)
        package static let unmount = Mask(rawValue: 0x0000_2000)
        package static let queueOverflow = Mask(rawValue: 0x0000_4000)
        package static let ignored = Mask(rawValue: 0x0000_8000)
        package static let onlyDirectory = Mask(rawValue: 0x0100_0000)
        package static let dontFollow = Mask(rawValue: 0x0200_0000)
        package static let excludeUnlinked = Mask(rawValue: 0x0400_0000)
        package static let maskAdd = Mask(rawValue: 0x2000_0000)
        package static let isDirectory = Mask(rawValue: 0x4000_0000)

        /// What the event model needs, and nothing else: no `IN_ACCESS`/`IN_OPEN` noise.
        package static let eventModel: Mask = [
            .modify, .attrib, .movedFrom, .movedTo, .create, .delete, .deleteSelf, .moveSelf,
        ]
    }

    /// One parsed `struct inotify_event`.
    package struct Event: Sendable {
        package var watch: CInt
        package var mask: Mask
        package var cookie: UInt32
        /// Empty for events about the watched item itself.
        package var name: [UInt8]

        package init(watch: CInt, mask: Mask, cookie: UInt32, name: [UInt8]) {
            self.watch = watch
            self.mask = mask
            self.cookie = cookie
            self.name = name
        }
    }

    package static let nonBlocking: CInt = 0o4000  // IN_NONBLOCK == O_NONBLOCK
    package static let closeOnExec: CInt = 0o2000000  // IN_CLOEXEC == O_CLOEXEC

    package static func initialize() -> Result<CInt, Errno> {
        valueOrErrno(retryOnInterrupt: true) { inotify_init1(nonBlocking | closeOnExec) }
    }

    package static func addWatch(_ descriptor: CInt, path: [UInt8], mask: Mask) -> Result<CInt, Errno> {
        return withCString(path) { pointer in
            valueOrErrno(retryOnInterrupt: true) { inotify_add_watch(descriptor, pointer, mask.rawValue) }
        }
    }

    @discardableResult
    package static func removeWatch(_ descriptor: CInt, watch: CInt) -> Result<Void, Errno> {
        valueOrErrno(retryOnInterrupt: true) { inotify_rm_watch(descriptor, watch) }.map { _ in () }
    }

    /// Size of `struct inotify_event` before its name.
    static let eventHeaderSize = 16

    /// The longest event the kernel queues: the header and a name of `NAME_MAX` (255) bytes,
    /// NUL-terminated and padded to a multiple of the header's size.
    static let longestEventSize = eventHeaderSize + 256

    /// Parses every complete event in `buffer`.
    package static func parse(_ buffer: UnsafeRawBufferPointer, into events: inout [Event]) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset + eventHeaderSize <= buffer.count {
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            guard offset + eventHeaderSize + length <= buffer.count else { break }
            events.append(event(at: base + offset))
            offset += eventHeaderSize + length
        }
    }

    /// The complete `struct inotify_event` at `raw` (its name, NUL-padded, included), as read
    /// from an inotify descriptor or handed out by libinotifytools.
    package static func event(at raw: UnsafeRawPointer) -> Event {
        let watch = raw.loadUnaligned(fromByteOffset: 0, as: Int32.self)
        let mask = raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
        let cookie = raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        let length = Int(raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        var name: [UInt8] = []
        if length > 0 {
            let bytes = UnsafeRawBufferPointer(start: raw + eventHeaderSize, count: length)
            name = Array(bytes[..<(bytes.firstIndex(of: 0) ?? length)])
        }
        return Event(watch: watch, mask: Mask(rawValue: mask), cookie: cookie, name: name)
    }
}
#endif
