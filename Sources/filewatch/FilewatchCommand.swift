import ArgumentParser
import PlatformLibc

/// The process's entry point: the command runs on the main thread, as with an `async` `main`,
/// but that thread is never ended (``MainThreadExecutor`` says why).
@main
enum FilewatchMain {
    static func main() {
        StandardDescriptors.reserve()
        // Past a file-size limit (`ulimit -f`) on the file stdout goes to, a `write(2)` fails
        // with EFBIG, which the command reports in one line and exit 1; by default the kernel
        // killed it with SIGXFSZ instead, mid-line and without a word.
        signal(SIGXFSZ, SIG_IGN)
        MainThreadExecutor.run { await FilewatchCommand.parseAndRun() }
    }
}

/// `filewatch`: tells people and scripts what changes on disk.
struct FilewatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filewatch",
        abstract: "Report changes to files and directories as they happen.",
        discussion: """
            Exit status: 0 after a clean stop (SIGINT, SIGTERM, or every root removed), 2 for bad \
            input (a missing root, an unknown backend, an unreadable configuration file, a bad \
            value), 1 when a watch fails after it started.
            """,
        subcommands: [
            WatchCommand.self, ListCommand.self, FollowCommand.self, BackendsCommand.self, SnapshotCommand.self,
            ChangesCommand.self,
        ],
        defaultSubcommand: WatchCommand.self
    )

    /// Parses and runs, turning every failure into one line on stderr and exit status 2
    /// (bad input) or 1 (a failure after the watch started).
    static func parseAndRun() async {
        do {
            try OpenFileLimit.check()
            var command = try parseAsRoot(RawArguments.decoded)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            exitProcess(exit.rawValue)
        } catch let failure as CommandFailure {
            StandardError.line("filewatch: error: \(failure.message)")
            exitProcess(failure.exitCode)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help, --version: ArgumentParser's own text.
                exit(withError: error)
            }
            let message = FilewatchCommand.message(for: error)
                .split(separator: "\n").first.map(String.init) ?? "invalid input"
            StandardError.line("filewatch: error: \(message.replacing("Error: ", with: ""))")
            exitProcess(2)
        }
    }
}

/// A failure with the exit status it deserves.
struct CommandFailure: Error {
    var message: String
    var exitCode: Int32

    static func badInput(_ message: String) -> CommandFailure { CommandFailure(message: message, exitCode: 2) }
    static func failed(_ message: String) -> CommandFailure { CommandFailure(message: message, exitCode: 1) }
}

/// `exit(3)`, named apart from ArgumentParser's `exit(withError:)` in the command's scope.
func exitProcess(_ code: Int32) -> Never {
    exit(code)
}
