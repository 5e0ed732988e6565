/// Where following begins in the file that is at the path when the follower starts. A file
/// that appears later, or takes the first one's place, is always followed from its first byte.
public enum FileFollowerStartPosition: Sendable, Hashable {
    /// Only what is written from now on (`tail -f` with `-n 0`); the default.
    case end
    /// The whole file, then what is written to it.
    case start
    /// The last `n` lines, as `tail -n N` counts them (an unterminated last line is a line).
    case lastLines(Int)
}
