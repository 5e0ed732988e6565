import ArgumentParser
import FileSystemEvents

/// `filewatch changes DIR --since FILE`: what changed since a saved snapshot, as the same
/// replayable events a live watch prints (how a service catches up after a restart).
struct ChangesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "Print what changed in a tree since a snapshot saved by `filewatch snapshot`.",
        discussion: """
            The events turn the saved tree into today's, in the `watch` output formats (JSON \
            Lines as in docs/cli-json.md, without `ready`: the snapshot is the starting state). \
            The tree is rescanned with the options the snapshot was taken with. --update then \
            rewrites the snapshot atomically, after every event has been written, so a reader \
            that stops early never loses a change. A snapshot file that is missing, truncated, \
            corrupted, of another format version or of another root exits 2 and says which.
            """
    )

    @Argument(help: "The directory (or file) the snapshot was taken of.", completion: .directory)
    var path: String

    @Option(help: ArgumentHelp("The snapshot to compare with.", valueName: "file"), completion: .file())
    var since: String

    @Flag(help: "Rewrite the snapshot with today's tree afterwards.")
    var update = false

    @Option(help: "Output format: text (for people) or json (JSON Lines, for scripts).")
    var format: WatchCommand.OutputFormat = .text

    func run() throws {
        let root = WatchOptions.absolute(FilePath(argument: path))
        let events: [FileSystemEvent]
        let snapshot: FileTreeSnapshot
        do {
            // The file is decoded while the tree is rescanned: about one scan in all.
            (events, snapshot) = try FileTreeSnapshot.changes(sinceSnapshotAt: FilePath(argument: since), root: root)
        } catch {
            throw CommandFailure.badInput(error.description)
        }
        // Their recorded contents stand in for them: a change inside one is not seen.
        for directory in snapshot.unreadableDirectories {
            StandardError.line("filewatch: warning: cannot list \(directory); changes inside it are not reported")
        }
        let formatter: any EventFormatter = format == .json ? JSONLinesFormatter() : TextFormatter(roots: [root])
        StandardOutput().write(formatter.events(events))
        if update {
            do {
                try snapshot.save(to: FilePath(argument: since))
            } catch {
                throw CommandFailure.failed(error.description)
            }
        }
    }
}
