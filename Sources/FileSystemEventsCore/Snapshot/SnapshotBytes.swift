/// The primitives of the snapshot file format (docs/snapshot-format.md): LEB128 varints,
/// zigzag for signed deltas, little-endian fixed fields, FNV-1a 64.
///
/// Everything stays on raw bytes: the writer appends to one array, the reader walks a buffer
/// pointer with explicit bounds, so saving and loading a million entries costs little more
/// than the allocations of the names themselves.
package struct SnapshotByteWriter {
    package var bytes: [UInt8] = []

    package init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    package mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    @inline(__always)
    package mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    @inline(__always)
    package mutating func varint(_ value: Int) {
        varint(UInt64(truncatingIfNeeded: value))
    }

    /// A signed value, zigzag-encoded so small magnitudes of either sign take few bytes.
    @inline(__always)
    package mutating func signed(_ value: Int64) {
        varint(zigzag(value))
    }

    package mutating func data(_ value: [UInt8]) {
        varint(value.count)
        bytes.append(contentsOf: value)
    }

    /// Overwrites 4 or 8 bytes at `offset`, little-endian (header fields known only at the end).
    package mutating func patch<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        let little = value.littleEndian
        withUnsafeBytes(of: little) { source in
            for index in 0..<source.count { bytes[offset + index] = source[index] }
        }
    }

    package mutating func fixed<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}

/// Why bytes that passed the checksum still do not decode: only a deliberately crafted file
/// (or a bug) gets here, and it is refused like any corruption.
package struct SnapshotFormatFault: Error {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
}

/// A bounds-checked cursor over the bytes of a snapshot.
package struct SnapshotByteReader {
    private let base: UnsafePointer<UInt8>
    package let count: Int
    package private(set) var offset: Int

    package init(_ buffer: UnsafeBufferPointer<UInt8>, offset: Int) {
        // An empty buffer has no base address; the callers never pass one (the header is checked first).
        self.base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.count = buffer.count
        self.offset = offset
    }

    package var remaining: Int { count - offset }
    package var isAtEnd: Bool { offset == count }

    @inline(__always)
    package mutating func byte() throws(SnapshotFormatFault) -> UInt8 {
        guard offset < count else { throw SnapshotFormatFault("ends inside an entry") }
        defer { offset += 1 }
        return base[offset]
    }

    @inline(__always)
    package mutating func varint() throws(SnapshotFormatFault) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < count else { throw SnapshotFormatFault("ends inside a number") }
            let byte = base[offset]
            offset += 1
            if shift == 63 && byte > 1 { throw SnapshotFormatFault("a number overflows 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// A varint that must fit in `limit` (a count or a length).
    @inline(__always)
    package mutating func count(atMost limit: Int, _ what: StaticString) throws(SnapshotFormatFault) -> Int {
        let value = try varint()
        guard value <= UInt64(limit) else { throw SnapshotFormatFault("\(what) \(value) exceeds \(limit)") }
        return Int(value)
    }

    @inline(__always)
    package mutating func signed() throws(SnapshotFormatFault) -> Int64 {
        unzigzag(try varint())
    }

    /// `length` bytes appended to `array`.
    @inline(__always)
    package mutating func append(_ length: Int, to array: inout [UInt8]) throws(SnapshotFormatFault) {
        guard length <= count - offset else { throw SnapshotFormatFault("ends inside a name") }
        array.append(contentsOf: UnsafeBufferPointer(start: base + offset, count: length))
        offset += length
    }

    package mutating func data() throws(SnapshotFormatFault) -> [UInt8] {
        let length = try count(atMost: remaining, "a length")
        var result: [UInt8] = []
        try append(length, to: &result)
        return result
    }
}

@inline(__always)
package func zigzag(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
}

@inline(__always)
package func unzigzag(_ value: UInt64) -> Int64 {
    Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
}

/// FNV-1a, 64 bits: a byte-at-a-time hash that needs no table and catches any accidental
/// change (truncation, flipped bits, a spliced copy) with near certainty. It is not a MAC:
/// a snapshot is not protected against someone who can write it on purpose.
package struct FNV1a64 {
    package private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var hash = value
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        value = hash
    }
}
