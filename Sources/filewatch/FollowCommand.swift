import ArgumentParser
import FileSystemEvents
import FileSystemEventsCore
import PlatformLibc

/// `filewatch follow`: `tail -F` that loses nothing across rotation, truncation and replacement.
struct FollowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract: "Print what is appended to a file, following it by name across rotation (like tail -F).",
        discussion: """
            Raw output (the default) writes the file's bytes to stdout unchanged as they arrive, \
            and notices (truncated, replaced, removed, appeared) to stderr, one line each. JSON \
            Lines output is a stable contract, documented in docs/cli-follow-json.md. SIGINT or \
            SIGTERM prints what is already readable, then exits 0. The backend and poll interval \
            may also come from the environment (FILEWATCH_BACKEND, FILEWATCH_POLL_INTERVAL).
            """
    )

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case raw
        case json
    }

    @Argument(help: "The file to follow; it may not exist yet.", completion: .file())
    var path: String

    @Flag(help: "Print the whole file first.")
    var fromStart = false

    // `.unconditional`, as `watch`'s numbers: `-n -1` is a (bad) value to report as such, not
    // a missing one.
    @Option(name: [.customShort("n"), .long], parsing: .unconditional, help: ArgumentHelp("Print the last N lines first.", valueName: "N"))
    var lines: Int?

    @Option(help: "Backend: auto, polling, inotify or inotifytools.")
    var backend: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between scans for the polling backend.", valueName: "seconds"))
    var pollInterval: Double?

    @Option(help: "Output format: raw (the bytes, as tail prints them) or json (JSON Lines, for scripts).")
    var format: OutputFormat = .raw

    func validate() throws {
        try validateBackendFlag(backend)
        if fromStart && lines != nil {
            throw ValidationError("--from-start and --lines cannot be combined")
        }
        if let lines, lines < 0 {
            throw ValidationError("--lines must be 0 or more (got \(lines))")
        }
        if let pollInterval, !(pollInterval >= 0.001 && pollInterval <= 86_400 && pollInterval.isFinite) {
            throw ValidationError("--poll-interval must be a number of seconds from 0.001 to 86400 (got \(pollInterval))")
        }
    }

    func run() async throws {
        let absolute = WatchOptions.absolute(FilePath(argument: path))
        var overrides = WatchConfiguration.Overrides()
        overrides.backend = backend
        overrides.pollInterval = pollInterval.map { .seconds($0) }  // in range: see `validate()`
        let configuration: WatchConfiguration
        do {
            configuration = try await WatchConfiguration.load(roots: [absolute], overrides: overrides)
        } catch {
            throw CommandFailure.badInput(String(describing: error))
        }
        AutoBackendNotice.warnIfInotifyPassedOver(configuration)
        var options = FileFollower.Options()
        if fromStart {
            options.startPosition = .start
        } else if let lines {
            options.startPosition = .lastLines(lines)
        }
        let follower = FileFollower(path: absolute, options: options, configuration: configuration)
        let format = format
        let name = path

        // The handler goes in before anything is printed: a script that sends SIGINT as
        // soon as it sees output must find it installed. It cancels the follow's task, which
        // may not exist yet.
        let pending = PendingRequests<Task<Void, any Error>>()
        _ = try TerminationMonitor(onFirstSignal: { pending.request { $0.cancel() } }, onOutputClosed: { pending.request { $0.cancel() } })
        let worker = Task {
            var printer = FollowPrinter(format: format, name: name)
            var hasStarted = false
            do {
                for try await update in follower {
                    // What only start-up ran need not stay resident while the file is followed.
                    if !hasStarted { MemoryRelease.unmapStartUpFilePages() }
                    hasStarted = true
                    printer.print(update)
                }
                printer.finish()
            } catch {
                printer.finish()
                // Stopped as asked: whatever the follower threw on its way out is no failure.
                if Task.isCancelled || error is CancellationError { return }
                // Before anything was delivered, the path or the options were at fault.
                let message = String(describing: error)
                throw hasStarted ? CommandFailure.failed(message) : CommandFailure.badInput(message)
            }
        }
        pending.attach(worker)
        try await worker.value
    }
}

/// Writes a follower's updates as `filewatch follow` prints them.
struct FollowPrinter {
    let format: FollowCommand.OutputFormat
    /// The path as the user typed it, for notices.
    let name: String
    private let output: StandardOutput
    private var json = FollowJSONLinesFormatter()

    init(format: FollowCommand.OutputFormat, name: String) {
        self.format = format
        self.name = name
        // The raw bytes of the file have no records to keep whole; JSON Lines have.
        output = StandardOutput(writesWholeLines: format == .json)
    }

    mutating func print(_ update: FileFollowerUpdate) {
        switch (format, update) {
        case (.raw, .data(let chunk)):
            output.write(chunk.bytes)
        case (.raw, .notice(let notice)):
            StandardError.line("filewatch: " + Self.message(for: notice.kind, name: name))
        case (.json, _):
            output.write(json.format(update))
        }
    }

    mutating func finish() {
        if format == .json { output.write(json.flush()) }
    }

    /// `tail -F`'s wording, so people and their scripts recognise it.
    static func message(for kind: FileFollowerNotice.Kind, name: String) -> String {
        switch kind {
        case .truncated: return "\(name): file truncated"
        case .replaced: return "'\(name)' has been replaced; following new file"
        case .removed: return "'\(name)' has become inaccessible: No such file or directory"
        case .appeared: return "'\(name)' has appeared; following new file"
        // tail -F has no such notice: GNU tail polls, or reads inotify events until the
        // queue overflows and then reverts to polling, without saying what it missed.
        case .overflowed: return "\(name): events were lost (kernel queue overflow); files rotated through the path meanwhile may be missing"
        }
    }
}
