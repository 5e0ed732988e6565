import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/event-merges.md lists, per operation and backend, every event sequence a watch may
/// report for it at latency zero; which one depends on timing. This suite performs each
/// operation many times, back to back, and fails on any sequence the document does not list,
/// so a change of behaviour must change the document too.
@Suite(.serialized) struct DocumentedMergesTests {
    static let repetitions = 12

    @Test("each operation reports one of the sequences docs/event-merges.md lists", arguments: availableBackends)
    func documentedSequences(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        let operations = Self.operations
        for operation in operations {
            for index in 0..<Self.repetitions { try operation.prepare(MergeProbe(tree: tree, prefix: "\(operation.key)\(index)")) }
        }
        let source = try backend.makeSource(options: WatchOptions(roots: [tree.root], pollInterval: .milliseconds(15)))
        let marker = tree.path("marker")
        let observed = try await observe(source.updates(), onReady: {
            // Interleaved, with no pause: some repetitions share a kernel read or a scan with
            // their neighbours, others do not.
            for index in 0..<Self.repetitions {
                for operation in operations { try operation.perform(MergeProbe(tree: tree, prefix: "\(operation.key)\(index)")) }
            }
            try tree.write("marker", "x")
        }, untilEvent: { $0.path == marker })

        let rootLength = tree.root.string.utf8.count + 1
        func relative(_ path: FilePath) -> String { String(path.string.dropFirst(rootLength)) }
        let isPolling = backend == .polling
        for operation in operations {
            for index in 0..<Self.repetitions {
                let prefix = "\(operation.key)\(index)"
                let sequence = observed.events.compactMap { event -> String? in
                    let path = relative(event.path)
                    let previous = event.previousPath.map(relative)
                    guard MergeProbe.belongs(path, to: prefix) || previous.map({ MergeProbe.belongs($0, to: prefix) }) == true else { return nil }
                    let strip = { (name: String) in String(name.dropFirst(prefix.count + 1)) }
                    if let previous { return "\(event.kind) \(strip(previous))->\(strip(path))" }
                    return "\(event.kind) \(strip(path))"
                }
                let allowed = isPolling ? Self.withScanRaces(operation.polling) : Self.withSplitMoves(operation.kernel)
                #expect(allowed.contains(sequence), "\(backend): \(operation.name) reported \(sequence); docs/event-merges.md allows \(allowed.sorted { $0.count < $1.count })")
            }
        }
    }

    /// Adds what a rename becomes when it lands while a scan reads its directory (the old name
    /// listed, gone by its `stat`; the new one seen by the same scan or the next): the item is
    /// `removed` at the old path and `created` at the new one, in either order, and the
    /// `modified` that follows a polling `renamed` goes with it.
    ///
    /// And the rename's own change of the item's ctime, which the kernel makes before it moves
    /// the name: a scan in that instant reads the old name `modified`, the next one the rename.
    static func withScanRaces(_ sequences: Set<[String]>) -> Set<[String]> {
        withRenameVariants(sequences) { from, to, rest in
            let whole = ["renamed \(from)->\(to)"] + rest
            let rest = rest.first == "modified \(to)" ? Array(rest.dropFirst()) : rest
            return [["removed \(from)", "created \(to)"] + rest, ["created \(to)", "removed \(from)"] + rest,
                    ["modified \(from)"] + whole]
        }
    }

    /// Adds what a rename becomes when its two halves are read apart: the kernel queues
    /// `IN_MOVED_FROM` and `IN_MOVED_TO` in two steps, and a read between them that then finds
    /// the queue empty takes the first half for a move out of the tree.
    static func withSplitMoves(_ sequences: Set<[String]>) -> Set<[String]> {
        withRenameVariants(sequences) { from, to, rest in [["removed \(from)", "created \(to)"] + rest] }
    }

    /// `sequences`, and for each one with a `renamed X->Y`, the sequences `variants` makes of
    /// that rename and what follows it, each after what came before it.
    private static func withRenameVariants(
        _ sequences: Set<[String]>,
        _ variants: (_ from: String, _ to: String, _ rest: [String]) -> [[String]]
    ) -> Set<[String]> {
        var result = sequences
        for sequence in sequences {
            guard let index = sequence.firstIndex(where: { $0.hasPrefix("renamed ") }) else { continue }
            let names = sequence[index].dropFirst("renamed ".count).components(separatedBy: "->")
            guard names.count == 2 else { continue }
            let before = Array(sequence[..<index])
            for variant in variants(names[0], names[1], Array(sequence[(index + 1)...])) { result.insert(before + variant) }
        }
        return result
    }

    /// The operations and what docs/event-merges.md allows for each: `kernel` for inotify and
    /// inotifytools, `polling` for polling. Paths are relative to the repetition's own names.
    static let operations: [MergeOperation] = [
        MergeOperation(
            key: "empty", name: "create an empty file",
            perform: { try $0.create("f", content: nil) },
            kernel: [["created f"]],
            polling: [["created f"]]),
        MergeOperation(
            key: "touch", name: "touch a new file (create, then set its times)",
            perform: { try $0.create("f", content: nil, setTimes: true) },
            kernel: [["created f"], ["created f", "attributesChanged f"]],
            polling: [["created f"], ["created f", "modified f"]]),
        MergeOperation(
            key: "write", name: "create a file with content",
            perform: { try $0.create("f", content: "hello") },
            kernel: [["created f"], ["created f", "modified f"]],
            polling: [["created f"], ["created f", "modified f"]]),
        MergeOperation(
            key: "rewrite", name: "rewrite an existing file (O_TRUNC, then write)",
            prepare: { try $0.create("f", content: "old content") },
            perform: { try $0.rewrite("f", content: "new") },
            kernel: [["modified f"], ["modified f", "modified f"]],
            polling: [["modified f"], ["modified f", "modified f"]]),
        MergeOperation(
            key: "append", name: "two appends to an existing file",
            prepare: { try $0.create("f", content: "line\n") },
            perform: { try $0.appendTwice("f") },
            kernel: [["modified f"], ["modified f", "modified f"]],
            polling: [["modified f"], ["modified f", "modified f"]]),
        MergeOperation(
            key: "chmod", name: "change an existing file's mode",
            prepare: { try $0.create("f", content: "x") },
            perform: { try $0.changeMode("f") },
            kernel: [["attributesChanged f"]],
            polling: [["attributesChanged f"]]),
        MergeOperation(
            key: "times", name: "touch an existing file (set its times)",
            // Times in the past first, so "now" differs even within one timestamp tick.
            prepare: { try $0.create("f", content: "x"); try $0.setTimes("f", toSecondsSinceEpoch: 1_000_000_000) },
            perform: { try $0.setTimes("f") },
            kernel: [["attributesChanged f"]],
            polling: [["modified f"]]),
        MergeOperation(
            key: "brief", name: "create a file and remove it at once",
            perform: { try $0.createAndRemove("f") },
            kernel: [[], ["created f", "removed f"]],
            polling: [[], ["created f", "removed f"]]),
        MergeOperation(
            key: "rename", name: "rename an existing file",
            prepare: { try $0.create("a", content: "x") },
            perform: { try $0.rename("a", to: "b") },
            kernel: [["renamed a->b"]],
            polling: [["renamed a->b", "modified b"], ["renamed a->b"]]),
        MergeOperation(
            key: "mkdirp", name: "mkdir -p of three levels",
            perform: { try $0.makeDirectories("d/e/f") },
            kernel: [["created d", "created d/e", "created d/e/f"]],
            polling: [["created d", "created d/e", "created d/e/f"]]),
        MergeOperation(
            key: "save", name: "atomic save (write a temporary file, rename it over the target)",
            prepare: { try $0.create("doc", content: "v1") },
            perform: { try $0.atomicSave("doc", through: "doc.tmp", content: "v2") },
            kernel: [["created doc"], ["created doc.tmp", "renamed doc.tmp->doc"], ["created doc.tmp", "modified doc.tmp", "renamed doc.tmp->doc"]],
            polling: [["removed doc", "created doc"],
                      ["created doc.tmp", "removed doc", "renamed doc.tmp->doc"],
                      ["created doc.tmp", "removed doc", "renamed doc.tmp->doc", "modified doc"],
                      ["created doc.tmp", "modified doc.tmp", "removed doc", "renamed doc.tmp->doc"],
                      ["created doc.tmp", "modified doc.tmp", "removed doc", "renamed doc.tmp->doc", "modified doc"],
                      // A scan that read doc.tmp before the rename and doc after it sees both.
                      ["removed doc", "created doc", "created doc.tmp", "removed doc.tmp"],
                      ["created doc.tmp", "removed doc", "created doc", "removed doc.tmp"],
                      ["created doc.tmp", "modified doc.tmp", "removed doc", "created doc", "removed doc.tmp"],
                      ["created doc.tmp", "removed doc", "created doc", "modified doc.tmp", "removed doc.tmp"]]),
    ]
}

struct MergeOperation: Sendable {
    var key: String
    var name: String
    var prepare: @Sendable (MergeProbe) throws -> Void = { _ in }
    var perform: @Sendable (MergeProbe) throws -> Void
    var kernel: Set<[String]>
    var polling: Set<[String]>

    init(key: String, name: String, prepare: @escaping @Sendable (MergeProbe) throws -> Void = { _ in },
         perform: @escaping @Sendable (MergeProbe) throws -> Void, kernel: Set<[String]>, polling: Set<[String]>) {
        self.key = key
        self.name = name
        self.prepare = prepare
        self.perform = perform
        self.kernel = kernel
        self.polling = polling
    }
}

/// One repetition's names (`<prefix>-<name>`) and the system calls an operation is made of,
/// called directly so each operation is exactly the calls the document names.
struct MergeProbe {
    let tree: ScratchTree
    let prefix: String

    static func belongs(_ relative: String, to prefix: String) -> Bool { relative.hasPrefix(prefix + "-") }

    private func path(_ name: String) -> String { tree.path(RelativePath("\(prefix)-\(name)")).string }

    func create(_ name: String, content: String?, setTimes: Bool = false) throws {
        let descriptor = try check("open", open(path(name), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644))
        defer { close(descriptor) }
        if let content { try write(content, to: descriptor) }
        if setTimes { _ = try check("futimens", futimens(descriptor, nil)) }
    }

    func rewrite(_ name: String, content: String) throws {
        let descriptor = try check("open", open(path(name), O_WRONLY | O_TRUNC | O_CLOEXEC))
        defer { close(descriptor) }
        try write(content, to: descriptor)
    }

    func appendTwice(_ name: String) throws {
        let descriptor = try check("open", open(path(name), O_WRONLY | O_APPEND | O_CLOEXEC))
        defer { close(descriptor) }
        try write("one\n", to: descriptor)
        try write("two\n", to: descriptor)
    }

    func changeMode(_ name: String) throws { _ = try check("chmod", chmod(path(name), 0o600)) }

    func setTimes(_ name: String) throws { _ = try check("utimensat", utimensat(AT_FDCWD, path(name), nil, 0)) }

    func setTimes(_ name: String, toSecondsSinceEpoch seconds: Int) throws {
        let time = timespec(tv_sec: seconds, tv_nsec: 0)
        let times = [time, time]
        _ = try check("utimensat", utimensat(AT_FDCWD, path(name), times, 0))
    }

    func createAndRemove(_ name: String) throws {
        try create(name, content: nil)
        _ = try check("unlink", unlink(path(name)))
    }

    func rename(_ name: String, to newName: String) throws { _ = try check("rename", Glibc.rename(path(name), path(newName))) }

    func makeDirectories(_ names: String) throws {
        var partial = ""
        for component in names.split(separator: "/") {
            partial += partial.isEmpty ? String(component) : "/\(component)"
            _ = try check("mkdir", mkdir(path(partial), 0o755))
        }
    }

    func atomicSave(_ name: String, through temporary: String, content: String) throws {
        try create(temporary, content: content)
        try rename(temporary, to: name)
    }

    private func write(_ content: String, to descriptor: CInt) throws {
        let bytes = Array(content.utf8)
        guard Glibc.write(descriptor, bytes, bytes.count) == bytes.count else { throw MergeProbeFailure(what: "write", errno: errno) }
    }

    @discardableResult
    private func check(_ what: String, _ result: CInt) throws -> CInt {
        guard result >= 0 else { throw MergeProbeFailure(what: what, errno: errno) }
        return result
    }
}

struct MergeProbeFailure: Error, CustomStringConvertible {
    var what: String
    var errno: CInt
    var description: String { "\(what) failed: errno \(errno)" }
}
