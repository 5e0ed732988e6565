import FileSystemEvents

/// Turns updates into output bytes, one complete line per record, so a reader of a pipe never
/// sees half a record.
protocol EventFormatter: Sendable {
    func ready(backend: String, roots: [FilePath]) -> [UInt8]
    func events(_ events: [FileSystemEvent]) -> [UInt8]
}
