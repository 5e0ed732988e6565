import ArgumentParser
import FileSystemEvents
import FileSystemEventsCore
import PlatformLibc

/// `filewatch list`: a directory's entries, sorted, once (like `ls`) or kept up to date.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print a directory's entries, sorted; with --live, print how the list changes.",
        discussion: """
            Without --live, prints the sorted listing once and exits. With --live, prints the \
            listing and then each change with its position in the list, until SIGINT or SIGTERM \
            (exit 0) or until the directory is removed or moved away (exit 0 after an 'ended' \
            line). The JSON Lines format is a stable contract, documented in docs/cli-list-json.md. \
            The backend, latency and poll interval may also come from the environment \
            (FILEWATCH_BACKEND, FILEWATCH_LATENCY, FILEWATCH_POLL_INTERVAL).
            """
    )

    enum SortKey: String, ExpressibleByArgument, CaseIterable {
        case name
        case modified
        case size

        var key: DirectoryListing.SortOrder.Key {
            switch self {
            case .name: return .name
            case .modified: return .modificationTime
            case .size: return .size
            }
        }
    }

    @Argument(help: "The directory to list.", completion: .directory)
    var directory: String = "."

    @Flag(help: "Keep watching and print each change to the list.")
    var live = false

    @Option(help: "Sort by name (bytes), modified (time) or size; ties are broken by name.")
    var sort: SortKey = .name

    @Flag(help: "Reverse the order.")
    var descending = false

    @Flag(name: [.short, .long], help: "Include entries whose name starts with a dot.")
    var all = false

    @Flag(help: "List the whole subtree, by path relative to the directory.")
    var recursive = false

    @Option(help: "Backend for --live: auto, polling, inotify or inotifytools.")
    var backend: String?

    // `.unconditional`, as `watch` has them: `--latency -1` is a (bad) value to report as such,
    // not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds to gather changes into one update (--live).", valueName: "seconds"))
    var latency: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between scans for the polling backend (--live).", valueName: "seconds"))
    var pollInterval: Double?

    @Option(help: "Output format: text (for people) or json (JSON Lines, for scripts).")
    var format: WatchCommand.OutputFormat = .text

    func validate() throws {
        try validateBackendFlag(backend)
        if let latency, !(latency >= 0 && latency <= 86_400 && latency.isFinite) {
            throw ValidationError("--latency must be a number of seconds from 0 to 86400 (got \(latency))")
        }
        if let pollInterval, !(pollInterval >= 0.001 && pollInterval <= 86_400 && pollInterval.isFinite) {
            throw ValidationError("--poll-interval must be a number of seconds from 0.001 to 86400 (got \(pollInterval))")
        }
    }

    func run() async throws {
        let path = WatchOptions.absolute(FilePath(argument: directory))
        var options = DirectoryListing.Options(
            sortOrder: .init(sort.key, descending: descending), includesHidden: all, isRecursive: recursive)
        var formatter = ListingFormatter(format: format == .json ? .json : .text)
        let output = StandardOutput()

        guard live else {
            do {
                let (entries, unreadable) = try DirectoryListing(directory: path, options: options, backend: .polling).currentEntriesNamingUnreadable()
                // As `ls -R` does, but on: the listing is complete but for these.
                for (directory, errno) in unreadable {
                    StandardError.line("filewatch: warning: cannot list \(directory) (\(errno)); its entries are not listed")
                }
                output.write(formatter.format(.listing(entries)))
            } catch {
                throw CommandFailure.badInput(String(describing: error))
            }
            return
        }

        var overrides = WatchConfiguration.Overrides()
        overrides.backend = backend
        // Checked by `validate()`: finite and in range, so the conversion cannot trap.
        overrides.latency = latency.map { .seconds($0) }
        overrides.pollInterval = pollInterval.map { .seconds($0) }
        let configuration: WatchConfiguration
        do {
            configuration = try await WatchConfiguration.load(roots: [path], overrides: overrides)
        } catch {
            throw CommandFailure.badInput(String(describing: error))
        }
        AutoBackendNotice.warnIfInotifyPassedOver(configuration)
        options.latency = configuration.options.latency
        let listing = DirectoryListing(directory: path, options: options, configuration: configuration)

        // The handler goes in before anything is printed: a script that sends SIGINT as soon
        // as it sees the listing's first line must find it installed (it found the default
        // action, which ended the process by the signal, about once in 150 under load). It
        // cancels the listing's task, which may not exist yet.
        let pending = PendingRequests<Task<Void, any Error>>()
        _ = try TerminationMonitor(onFirstSignal: { pending.request { $0.cancel() } }, onOutputClosed: { pending.request { $0.cancel() } })
        let worker = Task {
            var hasDelivered = false
            do {
                for try await update in listing {
                    // What only start-up ran need not stay resident while the listing lives.
                    if !hasDelivered { MemoryRelease.unmapStartUpFilePages() }
                    hasDelivered = true
                    output.write(formatter.format(update))
                }
            } catch {
                // Stopped as asked: whatever the listing threw on its way out is no failure.
                if Task.isCancelled || error is CancellationError { return }
                // Before the first update, the directory or the options were at fault.
                let message = String(describing: error)
                throw hasDelivered ? CommandFailure.failed(message) : CommandFailure.badInput(message)
            }
        }
        pending.attach(worker)
        try await worker.value
    }
}
