/// Where a scan collects one directory's entries in the order the kernel lists them (hash
/// order on ext4), to hand them over sorted by name, at their exact size.
///
/// The entries are sorted as positions and moved once, never copied: sorted in an array, each
/// entry (88 bytes then) was moved about by the sort, then copied into the directory's array at its
/// size, and the copy left behind released. Each copy and release of an entry goes through
/// its name's value witness (a name may hold an array), and with the sort they took a fifth of
/// a polling scan's user time on a tree of 100-file directories. A position sorts by the
/// first 16 bytes of its name, two words compared in `memcmp` order; only names that share
/// those 16 bytes are compared whole.
///
/// One buffer serves every directory of a walk, which lists a directory whole before it
/// descends, so the capacity the largest one needed is allocated once.
final class ListingBuffer {
    private var base: UnsafeMutablePointer<SnapshotEntry>
    private var capacity: Int
    private(set) var count = 0
    /// The sort keys, kept for the next directory too.
    private var keys: [(high: UInt64, low: UInt64, position: UInt32)] = []

    init() {
        capacity = 64
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    func append(_ entry: SnapshotEntry) {
        if count == capacity { grow() }
        (base + count).initialize(to: entry)
        count += 1
    }

    private func grow() {
        let larger = UnsafeMutablePointer<SnapshotEntry>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    /// The entries collected, sorted by name bytes (``SnapshotName/compare(_:_:)``), in an
    /// array of their number; the buffer is left empty. The sort is stable, as the array's was.
    func takeSorted() -> [SnapshotEntry] {
        let count = self.count
        self.count = 0
        keys.removeAll(keepingCapacity: true)
        keys.reserveCapacity(count)
        for position in 0..<count {
            let (high, low) = base[position].name.leadingWords
            keys.append((high, low, UInt32(truncatingIfNeeded: position)))
        }
        let entries = base
        keys.sort { a, b in
            if a.high != b.high { return a.high < b.high }
            if a.low != b.low { return a.low < b.low }
            // Both longer than 16 bytes, with those alike (a shorter name ends in a zero there).
            return SnapshotName.compare(entries[Int(a.position)].name, entries[Int(b.position)].name) < 0
        }
        return [SnapshotEntry](unsafeUninitializedCapacity: count) { buffer, initialized in
            for (index, key) in keys.enumerated() {
                (buffer.baseAddress! + index).initialize(to: (entries + Int(key.position)).move())
            }
            initialized = count
        }
    }
}
