import ArgumentParser
import FileSystemEvents

/// `filewatch snapshot DIR --output FILE`: records a tree so `filewatch changes` (or
/// `FileTreeSnapshot.load`) can later say what changed since.
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Save the state of a tree to a file, for `filewatch changes --since`.",
        discussion: """
            The file records the root, the scan options (--no-recursive, --follow-symlinks, \
            --include, --exclude) and every item's identity and status; `changes` rescans with \
            the same options. It is replaced atomically, so an interrupted run leaves the \
            previous snapshot intact. Format: docs/snapshot-format.md.
            """
    )

    @Argument(help: "The directory (or file) to record.", completion: .directory)
    var path: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the snapshot.", valueName: "file"), completion: .file())
    var output: String

    @Flag(name: .customLong("no-recursive"), help: "Record only the root's direct children.")
    var noRecursive = false

    @Flag(help: "Traverse symlinks to directories.")
    var followSymlinks = false

    @Option(help: ArgumentHelp("Record only non-directory items matching this glob (repeatable).", valueName: "glob"))
    var include: [String] = []

    @Option(help: ArgumentHelp("Ignore items matching this glob, and whole directories (repeatable).", valueName: "glob"))
    var exclude: [String] = []

    func run() throws {
        let root = WatchOptions.absolute(FilePath(argument: path))
        let snapshot: FileTreeSnapshot
        do {
            snapshot = try FileTreeSnapshot.scan(
                root,
                isRecursive: !noRecursive,
                followsSymlinks: followSymlinks,
                filter: PathFilter(include: include.map(PathGlob.init(argument:)), exclude: exclude.map(PathGlob.init(argument:)))
            )
        } catch {
            throw CommandFailure.badInput(error.description)
        }
        // Recorded as empty: a later `changes` would tell what they hold as created.
        for directory in snapshot.unreadableDirectories {
            StandardError.line("filewatch: warning: cannot list \(directory); what it holds is not in the snapshot")
        }
        do {
            try snapshot.save(to: FilePath(argument: output))
        } catch {
            throw CommandFailure.badInput(error.description)
        }
    }
}
