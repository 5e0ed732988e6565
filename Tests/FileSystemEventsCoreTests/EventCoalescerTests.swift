import FileSystemEventsCore
import SystemPackage
import Testing

/// The coalescer drops only what says nothing new, and never across a structural change.
@Suite struct EventCoalescerTests {
    static func event(_ kind: FileSystemEvent.Kind, _ path: String, from previous: String? = nil, type: FileItemType = .file) -> FileSystemEvent {
        FileSystemEvent(kind: kind, path: FilePath(path), previousPath: previous.map { FilePath($0) }, itemType: type, isSynthetic: false)
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

    @Test("a structural event resets what is known of every path it may change", arguments: [FileSystemEvent.Kind.removed, .renamed, .exchanged, .overflow, .rootRemoved])
    func structuralResets(kind: FileSystemEvent.Kind) {
        // At the path itself (a rename's either path), or of any type that moves other paths:
        // the second `modified` is told.
        var middles = [kind == .renamed || kind == .exchanged ? Self.event(kind, "/a", from: "/d") : Self.event(kind, "/a")]
        if kind == .renamed || kind == .exchanged { middles.append(Self.event(kind, "/c", from: "/a")) }
        for type in [FileItemType.directory, .unknown] {
            middles.append(kind == .renamed || kind == .exchanged ? Self.event(kind, "/c", from: "/d", type: type) : Self.event(kind, "/x", type: type))
        }
        if kind != .removed && kind != .renamed { middles.append(Self.event(kind, "/x", from: kind == .exchanged ? "/y" : nil)) }
        for middle in middles {
            let input = [Self.event(.modified, "/a"), middle, Self.event(.modified, "/a")]
            #expect(EventCoalescer.coalesce(input).count == 3, "\(Self.kinds(input))")
        }
    }

    @Test("a file removed or renamed elsewhere resets nothing at other paths")
    func fileEventsResetOnlyTheirPaths() {
        let input = [
            Self.event(.modified, "/log"), Self.event(.removed, "/tmp1"), Self.event(.modified, "/log"),
            Self.event(.renamed, "/b", from: "/tmp2"), Self.event(.modified, "/log"), Self.event(.attributesChanged, "/b"),
            Self.event(.removed, "/link1"), Self.event(.attributesChanged, "/b"),
        ]
        #expect(Self.kinds(EventCoalescer.coalesce(input)) == [
            "modified /log", "removed /tmp1", "renamed /b", "attributesChanged /b", "removed /link1",
        ])
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
            case .removed where [.file, .symlink, .other].contains(event.itemType):
                said[event.path] = nil
            case .renamed where [.file, .symlink, .other].contains(event.itemType):
                said[event.path] = nil
                said[event.previousPath!] = nil
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
                // Mostly files, whose removals and renames reset their own paths; now and then
                // a directory, which resets every path.
                let type: FileItemType = Int.random(in: 0..<6, using: &generator) == 0 ? .directory : .file
                let from = "/\(Int.random(in: 0..<5, using: &generator))"
                return kind == .renamed ? Self.event(.renamed, path, from: from, type: type) : Self.event(kind, path, type: type)
            }
            #expect(Self.kinds(EventCoalescer.coalesce(input)) == Self.kinds(Self.reference(input)), "\(Self.kinds(input))")
        }
    }
}
