/// The name of one entry in a snapshot, kept inside the entry when it is short.
///
/// A polling snapshot holds one of these per item of the tree, so their size is the snapshot's
/// size. Kept as `[UInt8]`, every name was a heap object of its own: a 32-byte header plus the
/// bytes, rounded by malloc to 48 bytes for a short name, more than half of what an entry
/// cost. Most names are short (`main.c`, `f12`, `index.js`), so names of up to 11 bytes are
/// stored in the 12 bytes of this value and allocate nothing; only longer ones keep an array.
/// Scanning then also stops allocating an array per examined name.
///
/// Why 11 and not 15: an entry lays its next field (the inode's low half) into the 4 bytes a
/// 16-byte name would have taken, which makes the entry 48 bytes instead of 56, a million
/// entries 7.6 MiB smaller (``SnapshotEntry``). Names of 12 to 15 bytes then cost an array
/// each (48 bytes of malloc); on this machine's `/usr` and package checkouts 13 % of names
/// are that long and 39 % shorter, so a real tree is still smaller, and a tree of short
/// names much smaller.
///
/// The inline form pads with zero bytes, which no file name contains: the padding is what
/// gives the length, and comparing the padded words in memory order is `memcmp` order with
/// shorter-prefix-first, the order entries are sorted in (``compareBytes(_:_:)``).
/// A name is inline exactly when it fits, so two equal names always have the same form.
package struct SnapshotName: Sendable {
    /// 11 bytes: with the enum's tag the whole value is 12, and its size (not its stride) is
    /// what the field after it in a struct starts from.
    package struct InlineBytes: Sendable {
        var high: UInt64 = 0
        var low: UInt16 = 0
        var last: UInt8 = 0
    }

    /// Internal, not private: ``SnapshotEntryName`` stores these same forms beside a third.
    enum Storage: Sendable {
        case inline(InlineBytes)
        case heap([UInt8])
    }

    var storage: Storage

    init(storage: Storage) {
        self.storage = storage
    }

    /// The longest name kept inline.
    package static var inlineCapacity: Int { 11 }

    /// A name from raw bytes, which must not contain a zero byte (no file name does).
    package init(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.inlineCapacity else {
            storage = .heap(Array(bytes))
            return
        }
        var inline = InlineBytes()
        withUnsafeMutableBytes(of: &inline) { destination in
            if let base = bytes.baseAddress, bytes.count > 0 {
                destination.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
            }
        }
        storage = .inline(inline)
    }

    package init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { SnapshotName($0) }
    }

    /// The name as an array (allocates for an inline name).
    package var bytes: [UInt8] {
        switch storage {
        case .heap(let bytes): return bytes
        case .inline: return withBytes { Array($0) }
        }
    }

    package var count: Int {
        switch storage {
        case .heap(let bytes): return bytes.count
        case .inline(let inline): return Self.length(of: inline)
        }
    }

    /// Calls `body` with the name's bytes, without copying them to the heap.
    @inline(__always)
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch storage {
        case .heap(let bytes):
            return try bytes.withUnsafeBytes(body)
        case .inline(let inline):
            let count = Self.length(of: inline)
            return try withUnsafeBytes(of: inline) { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }

    @inline(__always)
    private static func length(of inline: InlineBytes) -> Int {
        withUnsafeBytes(of: inline) { raw in
            var count = 0
            while count < inlineCapacity && raw[count] != 0 { count += 1 }
            return count
        }
    }

    /// The first 16 bytes of the name, zero-padded, as two big-endian words: compared as
    /// integers, two names' words are in ``compare(_:_:)`` order wherever they differ, and
    /// alike only if the names are equal or both longer than 16 bytes with those bytes alike
    /// (a name shorter than that has a zero where a longer one has its next byte).
    package var leadingWords: (high: UInt64, low: UInt64) {
        switch storage {
        case .inline(let inline):
            let low = UInt64(UInt16(bigEndian: inline.low)) << 48 | UInt64(inline.last) << 40
            return (UInt64(bigEndian: inline.high), low)
        case .heap(let bytes):
            return bytes.withUnsafeBytes { Self.leadingWords(of: $0) }
        }
    }

    /// ``leadingWords`` of a name given as raw bytes.
    package static func leadingWords(of bytes: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64) {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(16)))
        }
        return (UInt64(bigEndian: words.0), UInt64(bigEndian: words.1))
    }

    /// `memcmp` order with shorter-prefix-first, as ``compareBytes(_:_:)``: negative, zero or
    /// positive.
    @inline(__always)
    package static func compare(_ lhs: SnapshotName, _ rhs: SnapshotName) -> Int {
        if case .inline(let l) = lhs.storage, case .inline(let r) = rhs.storage {
            // Byte-swapped to big-endian, each word compares in memory (memcmp) order.
            if l.high != r.high { return UInt64(bigEndian: l.high) < UInt64(bigEndian: r.high) ? -1 : 1 }
            if l.low != r.low { return UInt16(bigEndian: l.low) < UInt16(bigEndian: r.low) ? -1 : 1 }
            if l.last != r.last { return l.last < r.last ? -1 : 1 }
            return 0
        }
        return lhs.withBytes { l in rhs.withBytes { r in compareRawBytes(l, r) } }
    }

    @inline(__always)
    package static func compare(_ lhs: SnapshotName, _ rhs: [UInt8]) -> Int {
        lhs.withBytes { l in rhs.withUnsafeBytes { r in compareRawBytes(l, r) } }
    }
}

extension SnapshotName: Equatable {
    @inline(__always)
    package static func == (lhs: SnapshotName, rhs: SnapshotName) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.inline(let l), .inline(let r)):
            return l.high == r.high && l.low == r.low && l.last == r.last
        case (.heap(let l), .heap(let r)):
            return l == r
        default:
            return false  // one fits inline and the other does not
        }
    }
}

extension SnapshotName: CustomStringConvertible {
    package var description: String { String(decoding: bytes, as: UTF8.self) }
}

extension Array where Element == UInt8 {
    /// `self + "/" + name`, the way relative paths grow during a walk.
    @inline(__always)
    package func appendingComponent(_ name: SnapshotName) -> [UInt8] {
        name.withBytes { bytes in
            if isEmpty { return Array(bytes) }
            var path = self
            path.reserveCapacity(count + 1 + bytes.count)
            path.append(UInt8(ascii: "/"))
            path.append(contentsOf: bytes)
            return path
        }
    }
}

/// `memcmp` order with shorter-prefix-first on two byte buffers.
@inline(__always)
package func compareRawBytes(_ l: UnsafeRawBufferPointer, _ r: UnsafeRawBufferPointer) -> Int {
    let common = min(l.count, r.count)
    var index = 0
    while index < common {
        let a = l[index]
        let b = r[index]
        if a != b { return a < b ? -1 : 1 }
        index += 1
    }
    return l.count - r.count
}
