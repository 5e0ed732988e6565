/// Bytes read from the followed file, exactly as they are on disk.
///
/// Chunks arrive in order and never overlap: concatenated, the chunks of one generation are
/// the file's bytes from where following began, and after a ``FileFollowerNotice/Kind/truncated``
/// notice they start again at offset 0.
public struct FileChunk: Sendable, Hashable {
    /// The bytes, possibly ending inside a line or inside a multi-byte character.
    public var bytes: [UInt8]
    /// Which file at the path the bytes come from: 1 for the first file followed, one more for
    /// each file that took its place (rotation, delete and recreate, atomic replace).
    public var generation: Int
    /// The position of the first byte in that file.
    public var offset: Int64

    /// Takes each field as given; nothing is checked.
    public init(bytes: [UInt8], generation: Int, offset: Int64) {
        self.bytes = bytes
        self.generation = generation
        self.offset = offset
    }
}
