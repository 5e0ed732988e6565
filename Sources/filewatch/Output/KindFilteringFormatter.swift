import FileSystemEvents

/// `--only`: prints the events of some kinds and drops the rest, for a script that wants only
/// finished files (`--settle 1 --only settled`) or only arrivals. The printed stream is then no
/// longer one a consumer can replay into the tree; `ready` is always printed.
struct KindFilteringFormatter: EventFormatter {
    let base: any EventFormatter
    let kinds: Set<FileSystemEvent.Kind>

    func ready(backend: String, roots: [FilePath]) -> [UInt8] {
        base.ready(backend: backend, roots: roots)
    }

    func events(_ events: [FileSystemEvent]) -> [UInt8] {
        let kept = events.filter { kinds.contains($0.kind) }
        return kept.isEmpty ? [] : base.events(kept)
    }

    /// The kinds named by `--only` values (each repeatable or comma-separated); `nil` for none.
    /// Throws a message naming the flag and the kinds there are.
    static func kinds(from values: [String]) throws(KindListError) -> Set<FileSystemEvent.Kind>? {
        guard !values.isEmpty else { return nil }
        var kinds: Set<FileSystemEvent.Kind> = []
        for value in values {
            for name in value.split(separator: ",") {
                let trimmed = name.trimmingCharacters(in: " ")
                guard let kind = FileSystemEvent.Kind(rawValue: trimmed) else {
                    throw KindListError(
                        message: "invalid value '\(trimmed)' for --only: expected one or more of "
                            + FileSystemEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))
                }
                kinds.insert(kind)
            }
        }
        return kinds
    }

    struct KindListError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
