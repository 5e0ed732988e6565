/// One line of the followed file, without its newline.
public struct FileLine: Sendable, Hashable {
    /// The line's bytes, without the terminating `\n`.
    public var bytes: [UInt8]
    /// The file generation it comes from (see ``FileChunk/generation``).
    public var generation: Int
    /// The position of the line's first byte in that file.
    public var offset: Int64
    /// `false` for a last line that never got its newline: the file was truncated or replaced
    /// after it, or following ended.
    public var isTerminated: Bool

    /// Takes each field as given; `bytes` is the line without its newline.
    public init(bytes: [UInt8], generation: Int, offset: Int64, isTerminated: Bool) {
        self.bytes = bytes
        self.generation = generation
        self.offset = offset
        self.isTerminated = isTerminated
    }

    /// The line as text; bytes that are not valid UTF-8 become U+FFFD.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
