/// What a ``FileFollower`` delivers: the file's bytes, and notices of what happened to it.
public enum FileFollowerUpdate: Sendable, Hashable {
    /// Bytes read from the file, in order and without overlap (see ``FileChunk``).
    case data(FileChunk)
    /// Something happened to the file at the path: truncated, replaced, removed or appeared.
    case notice(FileFollowerNotice)
}
