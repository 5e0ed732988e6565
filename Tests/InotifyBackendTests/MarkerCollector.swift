#if os(Linux)
import FileSystemEventsCore
import Testing

/// A test's reader of one stream: waits for `ready`, then gathers every event up to a marker
/// file's, in the order delivered. Tests that inject faults into the kernel synchronise only on
/// such markers, never on time; the suites that use it carry a time limit, so a marker that is
/// never reported fails the test instead of hanging the run.
struct MarkerCollector {
    private let stream: FileSystemEventStream
    private var iterator: FileSystemEventStream.AsyncIterator
    /// Every event delivered so far.
    private(set) var events: [FileSystemEvent] = []

    /// Reads `updates` until its `ready`.
    init(_ updates: FileSystemEventStream) async throws {
        stream = updates
        iterator = updates.makeAsyncIterator()
        while let update = try await iterator.next() {
            if case .ready = update { return }
        }
        Issue.record("the stream ended before ready")
    }

    /// Ends the watch and returns once its producer has closed every descriptor, so that what
    /// it holds is not closed during a later test that counts the process's descriptors (the
    /// watch's thread tears down on its own after the stream is dropped).
    func stop() async {
        await stream.stop()
    }

    /// Gathers events until a batch names `marker` (as its path's last component).
    mutating func collect(until marker: String) async throws {
        while let update = try await iterator.next() {
            guard case .events(let batch) = update else { continue }
            events += batch
            if batch.contains(where: { $0.path.lastComponent?.string == marker }) { return }
        }
        Issue.record("the stream ended before \(marker) was reported")
    }

    /// Gathers events until one satisfies `predicate` (``description`` names it if the stream
    /// ends first).
    mutating func collect(until description: String, _ predicate: (FileSystemEvent) -> Bool) async throws {
        while let update = try await iterator.next() {
            guard case .events(let batch) = update else { continue }
            events += batch
            if batch.contains(where: predicate) { return }
        }
        Issue.record("the stream ended before \(description)")
    }
}
#endif
