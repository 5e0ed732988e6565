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
            rewrites the snapshot atomically once every event has been written and, on a pipe, \
            read: a reader that stops before reading them all leaves the snapshot as it was. A \
            reader that reads everything and uses only part (`head -1`) cannot be told apart: \
            for exactly-once catch-up, save today's snapshot elsewhere with --save FILE and \
            move it over the old one once every change is handled. A snapshot file that is \
            missing, truncated, corrupted, of another format version or of another root exits \
            2 and says which.
            """
    )

    @Argument(help: "The directory (or file) the snapshot was taken of.", completion: .directory)
    var path: String

    @Option(help: ArgumentHelp("The snapshot to compare with.", valueName: "file"), completion: .file())
    var since: String

    @Flag(help: "Rewrite the snapshot with today's tree afterwards.")
    var update = false

    @Option(help: ArgumentHelp("Save today's tree to this file afterwards, leaving the snapshot as it is (move it over the snapshot once the changes are handled).",
                               valueName: "file"), completion: .file())
    var save: String?

    func validate() throws {
        if update && save != nil {
            throw ValidationError("--update and --save are two ways to store today's tree: give one")
        }
    }

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
        let output = StandardOutput()
        output.write(formatter.events(events))
        guard let destination = update ? since : save else { return }
        if update && !output.waitUntilRead() {
            StandardError.line("filewatch: the reader of standard output left before reading every change; \(since) is left as it was")
            return
        }
        do {
            try snapshot.save(to: FilePath(argument: destination))
        } catch {
            throw CommandFailure.failed(error.description)
        }
    }
}
