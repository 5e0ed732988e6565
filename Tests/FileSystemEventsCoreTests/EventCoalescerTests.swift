import FileSystemEventsCore
import SystemPackage
import Testing

/// The coalescer drops only what says nothing new, and never across a structural change.
@Suite struct EventCoalescerTests {
    static func event(_ kind: FileSystemEvent.Kind, _ path: String, from previous: String? = nil) -> FileSystemEvent {
        FileSystemEvent(kind: kind, path: FilePath(path), previousPath: previous.map { FilePath($0) }, itemType: .file, isSynthetic: false)
    }

    static func kinds(_ events: [FileSystemEvent]) -> [String] {
        events.map { "\($0.kind) \($0.path)" }
    }

    @Test("modified after created or modified, and attributes after created or attributes, are dropped")
    func dropsRepeats() {
        let input = [
            Self.event(.created, "/a"), Self.event(.modified, "/a"), Self.event(.attributesChanged, "/a"),
            Self.event(.modified, "/b"), Self.event(.modified, "/b"), Self.event(.attributesChanged, "/b"),
            Self.event(.attributesChanged, "/b"), Self.event(.modified, "/b"),
        ]
        #expect(Self.kinds(EventCoalescer.coalesce(input)) == ["created /a", "modified /b", "attributesChanged /b"])
    }

    @Test("a structural event resets what is known", arguments: [FileSystemEvent.Kind.removed, .renamed, .overflow, .rootRemoved])
    func structuralResets(kind: FileSystemEvent.Kind) {
        let middle = kind == .renamed ? Self.event(.renamed, "/c", from: "/d") : Self.event(kind, "/x")
        let input = [Self.event(.modified, "/a"), middle, Self.event(.modified, "/a")]
        #expect(EventCoalescer.coalesce(input).count == 3)
    }

    @Test("created again after a removal is kept, and order is preserved")
    func keepsOrder() {
        let input = [
            Self.event(.created, "/a"), Self.event(.removed, "/a"), Self.event(.created, "/a"),
            Self.event(.modified, "/a"), Self.event(.modified, "/b"),
        ]
        #expect(Self.kinds(EventCoalescer.coalesce(input)) == ["created /a", "removed /a", "created /a", "modified /b"])
    }

    @Test("single events and empty batches pass unchanged")
    func trivial() {
        #expect(EventCoalescer.coalesce([]).isEmpty)
        #expect(EventCoalescer.coalesce([Self.event(.modified, "/a")]).count == 1)
    }

    /// The rule, stated the simplest way: a record of every path kept from the first event.
    static func reference(_ events: [FileSystemEvent]) -> [FileSystemEvent] {
        var said: [FilePath: Set<String>] = [:]
        var result: [FileSystemEvent] = []
        for event in events {
            switch event.kind {
            case .modified:
                let known = said[event.path, default: []]
                if known.contains("created") || known.contains("modified") { continue }
                said[event.path, default: []].insert("modified")
            case .attributesChanged:
                let known = said[event.path, default: []]
                if known.contains("created") || known.contains("attributes") { continue }
                said[event.path, default: []].insert("attributes")
            case .created: said[event.path] = ["created"]
            case .settled: said[event.path] = nil
            case .removed, .renamed, .exchanged, .overflow, .rootRemoved: said.removeAll()
            }
            result.append(event)
        }
        return result
    }

    @Test("random batches are coalesced exactly as the plain rule says (the record is built lazily)")
    func agreesWithReference() {
        var generator = SystemRandomNumberGenerator()
        let kinds: [FileSystemEvent.Kind] = [.created, .created, .created, .modified, .modified, .attributesChanged, .settled, .removed, .renamed]
        for _ in 0..<500 {
            let count = Int.random(in: 0..<40, using: &generator)
            let input = (0..<count).map { _ in
                let kind = kinds.randomElement(using: &generator)!
                let path = "/\(Int.random(in: 0..<4, using: &generator))"
                return kind == .renamed ? Self.event(.renamed, path, from: "/r") : Self.event(kind, path)
            }
            #expect(Self.kinds(EventCoalescer.coalesce(input)) == Self.kinds(Self.reference(input)), "\(Self.kinds(input))")
        }
    }
}
