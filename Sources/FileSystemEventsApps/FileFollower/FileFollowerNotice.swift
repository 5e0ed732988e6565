/// Something that happened to the file at the followed path, as `tail -F` reports it on stderr.
public struct FileFollowerNotice: Sendable, Hashable, CustomStringConvertible {
    /// What happened to the file at the path; ``FileFollowerNotice/generation`` says which file
    /// each kind names.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// The file became shorter than what was already delivered (`copytruncate`, `: > file`);
        /// its chunks start again at offset 0.
        case truncated
        /// A different file now stands at the path (atomic replace, rotation noticed after the
        /// new file was created); the new generation's chunks follow, from its first byte. A
        /// file that comes back to the path over the ones that replaced it (`mv log log.tmp;
        /// : > log; mv log.tmp log`) is a new generation too, whose chunks start where its
        /// earlier generation's stopped.
        case replaced
        /// Nothing readable stands at the path any more (deleted, renamed away, or its directory
        /// gone). What a writer still appends to the previous file through a descriptor it
        /// holds is delivered after this notice, until the writer has moved on.
        case removed
        /// A file (re)appeared at the path after it was missing; its chunks follow, from its
        /// first byte (or, for a file that was followed before, from where it stopped: see
        /// ``replaced``).
        case appeared
        /// The kernel's event queue overflowed (the follower's watch fell too far behind the
        /// directory's changes), and the events it dropped may have told of files that stood
        /// at the path only meanwhile (rotated through it and away): those are not delivered.
        /// The follower goes on with the file at the path; `generation` is the newest one
        /// found when the overflow was heard (the follower also looks at the path on its own,
        /// so a file that came after the overflow may already be among them). The data of
        /// every generation found is still delivered whole.
        case overflowed
    }

    /// What happened.
    public var kind: Kind
    /// `truncated`, `removed`: the generation it happened to. `overflowed`: the newest
    /// generation found when it was heard (0 if none was). `replaced`, `appeared`: the new
    /// generation, whose chunks come next.
    public var generation: Int

    /// Takes both fields as given.
    public init(kind: Kind, generation: Int) {
        self.kind = kind
        self.generation = generation
    }

    /// The kind and generation, as in `truncated (generation 2)`.
    public var description: String { "\(kind.rawValue) (generation \(generation))" }
}
