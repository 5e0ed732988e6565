/// What a ``FileFollower`` delivers: the file's bytes, and notices of what happened to it.
public enum FileFollowerUpdate: Sendable, Hashable {
    case data(FileChunk)
    case notice(FileFollowerNotice)
}
