/// A persistent identity for a file or directory: a random (version 4) UUID that the source
/// stores in the item's extended attribute ``extendedAttributeName`` (with
/// ``WatchOptions/stampsStableIDs``), so that it survives renames, moves across levels,
/// restarts, and tools that copy extended attributes (which is how a duplicate is told from a
/// move: see ``FileSystemEvent/duplicateOf``).
///
/// On a file system that refuses extended attributes the ID is derived from device, inode and
/// birth time instead: it still survives renames within that file system and restarts, not a
/// copy or a move to another file system, and it tells no duplicates.
public struct FileStableID: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// `user.filewatch.id`: the attribute that carries the ID, as its 36-character text.
    public static let extendedAttributeName = "user.filewatch.id"

    /// The first 64 bits of the UUID, as its text form writes them (version bits included).
    public let high: UInt64
    /// The last 64 bits of the UUID (variant bits included).
    public let low: UInt64

    /// Takes the 128 bits as given; the version and variant bits are not checked.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh random ID (version 4, variant 1, as `uuidgen -r` makes).
    public static func random() -> FileStableID {
        var generator = SystemRandomNumberGenerator()
        let high = (generator.next() as UInt64) & 0xFFFF_FFFF_FFFF_0FFF | 0x0000_0000_0000_4000
        let low = (generator.next() as UInt64) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return FileStableID(high: high, low: low)
    }

    /// The ID of an item on a file system without extended attributes: device, inode and birth
    /// time mixed into 128 bits (version 8, "custom", so it never equals a random one).
    package static func derived(device: UInt64, inode: UInt64, birthTime: Int64) -> FileStableID {
        func mix(_ value: UInt64) -> UInt64 {
            var z = value &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let high = mix(device ^ mix(inode)) & 0xFFFF_FFFF_FFFF_0FFF | 0x0000_0000_0000_8000
        let low = mix(inode ^ mix(UInt64(bitPattern: birthTime))) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return FileStableID(high: high, low: low)
    }

    /// Parses the 36-character form (`8-4-4-4-12` hexadecimal digits, either case).
    public init?(_ text: String) {
        self.init(bytes: Array(text.utf8))
    }

    /// Parses the attribute's value.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0, digits = 0
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            digits += 1
        }
        self.init(high: high, low: low)
    }

    /// The attribute's value: the 36-character lowercase form.
    package var bytes: [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(36)
        for index in 0..<32 {
            if index == 8 || index == 12 || index == 16 || index == 20 { result.append(UInt8(ascii: "-")) }
            let word = index < 16 ? high : low
            let shift = UInt64(60 - 4 * (index % 16))
            result.append(hex[Int((word >> shift) & 0xF)])
        }
        return result
    }

    /// The 36-character lowercase form, exactly as the extended attribute stores it.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// Orders by the 128-bit value, ``high`` first.
    public static func < (lhs: FileStableID, rhs: FileStableID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
