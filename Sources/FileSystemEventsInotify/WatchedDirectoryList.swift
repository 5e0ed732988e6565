#if os(Linux)
/// The directory nodes one watch descriptor stands for, in the order they were added.
///
/// Nearly always exactly one: several only where followed symlinks, or roots that overlap,
/// reach one directory twice. An array held that one node in a heap buffer of its own, 48 bytes
/// with malloc's header for each watched directory of the tree (a tenth of what the model spent
/// per directory on 10,000 directories); the first node here is stored inline.
struct WatchedDirectoryList: Sequence {
    private var first: WatchedDirectory?
    private var others: [WatchedDirectory] = []

    init() {}

    /// The first node, `nil` only while the list is empty.
    var firstNode: WatchedDirectory? { first }
    /// The nodes after the first.
    var otherNodes: [WatchedDirectory] { others }

    init(first: WatchedDirectory?, others: [WatchedDirectory]) {
        // The first place is never empty while others are held.
        if first == nil, let head = others.first {
            self.first = head
            self.others = Array(others.dropFirst())
        } else {
            self.first = first
            self.others = others
        }
    }

    var isEmpty: Bool { first == nil }

    mutating func append(_ directory: WatchedDirectory) {
        if first == nil { first = directory } else { others.append(directory) }
    }

    /// Removes every node `shouldBeRemoved` picks; the rest keep their order.
    mutating func removeAll(where shouldBeRemoved: (WatchedDirectory) throws -> Bool) rethrows {
        guard let head = first else { return }
        if others.isEmpty {
            if try shouldBeRemoved(head) { first = nil }
            return
        }
        var kept = try ([head] + others).filter { try !shouldBeRemoved($0) }
        first = kept.isEmpty ? nil : kept.removeFirst()
        others = kept
    }

    struct Iterator: IteratorProtocol {
        fileprivate var first: WatchedDirectory?
        fileprivate var others: IndexingIterator<[WatchedDirectory]>

        mutating func next() -> WatchedDirectory? {
            if let head = first {
                first = nil
                return head
            }
            return others.next()
        }
    }

    func makeIterator() -> Iterator { Iterator(first: first, others: others.makeIterator()) }

    var underestimatedCount: Int { first == nil ? 0 : 1 + others.count }

    /// Whether the list holds more than one directory.
    var hasSeveral: Bool { first != nil && !others.isEmpty }
}
#endif
