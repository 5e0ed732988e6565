import ArgumentParser
import FileSystemEvents
import FileSystemEventsCore
import Synchronization
import PlatformLibc

/// `filewatch watch`: the long-running watcher.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch paths and print each change (the default command).",
        discussion: """
            Options may also come from the environment (FILEWATCH_BACKEND, FILEWATCH_LATENCY, \
            FILEWATCH_POLL_INTERVAL, FILEWATCH_RECURSIVE, FILEWATCH_FOLLOW_SYMLINKS, FILEWATCH_INCLUDE, \
            FILEWATCH_EXCLUDE, FILEWATCH_BUFFER_LIMIT, FILEWATCH_DEPTH, FILEWATCH_IGNORE_EDITOR_FILES, FILEWATCH_SETTLE, \
            FILEWATCH_WAIT_FOR_ROOTS, FILEWATCH_STABLE_IDS) or a JSON file given with --config ({"filewatch": {"backend": "polling"}}); \
            flags win over the environment, which wins over the file. The JSON Lines format is a \
            stable contract, documented in docs/cli-json.md.
            """
    )

    @Argument(help: "Files or directories to watch.", completion: .file())
    var paths: [String] = []

    @Option(help: "Backend: auto, polling, inotify or inotifytools.")
    var backend: String?

    @Option(help: "Output format: text (for people) or json (JSON Lines, for scripts).")
    var format: OutputFormat = .text

    // `.unconditional`: `--latency -1` is a (bad) value to report as such, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds to gather events before printing them (coalesces bursts), 0 to 86400.", valueName: "seconds"))
    var latency: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between scans for the polling backend, 0.001 to 86400.", valueName: "seconds"))
    var pollInterval: Double?

    @Flag(name: .customLong("no-recursive"), help: "Watch only the roots' direct children.")
    var noRecursive = false

    @Flag(help: "Traverse symlinks to directories.")
    var followSymlinks = false

    @Option(help: ArgumentHelp("Report only non-directory items matching this glob (repeatable).", valueName: "glob"))
    var include: [String] = []

    @Option(help: ArgumentHelp("Ignore items matching this glob, and whole directories (repeatable).", valueName: "glob"))
    var exclude: [String] = []

    @Option(parsing: .unconditional, help: ArgumentHelp("Report items at most this many directory levels below a root (0: direct children only); deeper directories are not watched.", valueName: "levels"))
    var depth: Int?

    @Flag(help: "Ignore editors' swap, backup and temporary files (*.swp, *~, .#*, 4913, .subl*.tmp, *.part).")
    var ignoreEditorFiles = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Also report `settled` for a file once it has been written and closed and this many seconds passed with no further write (polling: unchanged for this long and one interval), 0 to 86400.", valueName: "seconds"))
    var settle: Double?

    @Flag(help: "Wait for a root that does not exist yet (and for one that goes away to come back), instead of exiting 2; its appearance is reported as `created` for it and its contents, its removal as `removed`.")
    var waitForRoots = false

    @Flag(help: "Give every file and directory a persistent ID, stored in its extended attribute user.filewatch.id (written only where missing, never changing content or modification time), and print it as `id`; a copy carrying another item's ID is printed with `duplicateOf`.")
    var stableIds = false

    @Option(help: ArgumentHelp("Print only events of these kinds (repeatable or comma-separated), e.g. `--settle 1 --only settled` for finished files; `ready` is always printed. A filtered stream cannot be replayed into the tree.", valueName: "kinds"))
    var only: [String] = []

    @Option(help: ArgumentHelp("A JSON configuration file.", valueName: "file"), completion: .file())
    var config: String?

    @Option(help: ArgumentHelp("First print the changes since this snapshot (from `filewatch snapshot`), then `ready`.", valueName: "file"), completion: .file())
    var since: String?

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text
        case json
    }

    func validate() throws {
        try validateBackendFlag(backend)
        do {
            _ = try KindFilteringFormatter.kinds(from: only)
        } catch {
            throw ValidationError(error.description)
        }
        // Checked here, by flag name, before any conversion: 1e10 seconds would trap on the
        // way to a Duration.
        if let latency, !(latency.isFinite && latency >= 0 && latency <= 86_400) {
            throw ValidationError("invalid value \(Self.text(latency)) for --latency: expected a number of seconds from 0 to 86400")
        }
        if let pollInterval, !(pollInterval.isFinite && pollInterval >= 0.001 && pollInterval <= 86_400) {
            throw ValidationError("invalid value \(Self.text(pollInterval)) for --poll-interval: expected a number of seconds from 0.001 to 86400")
        }
        if let settle, !(settle.isFinite && settle >= 0 && settle <= 86_400) {
            throw ValidationError("invalid value \(Self.text(settle)) for --settle: expected a number of seconds from 0 to 86400")
        }
        if let depth, !WatchOptions.depthRange.contains(depth) {
            throw ValidationError("invalid value \(depth) for --depth: expected a whole number of directory levels from 0 to \(WatchOptions.depthRange.upperBound)")
        }
    }

    /// A number as the user probably typed it (`-1`, not `-1.0`).
    private static func text(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    func run() async throws {
        let roots = (paths.isEmpty ? ["."] : paths).map { WatchOptions.absolute(FilePath(argument: $0)) }

        // Checked by `validate()` already.
        let onlyKinds = (try? KindFilteringFormatter.kinds(from: only)) ?? nil
        var overrides = WatchConfiguration.Overrides()
        overrides.backend = backend
        // Checked by `validate()`: finite and in range, so the conversions cannot trap.
        overrides.latency = latency.map { .seconds($0) }
        overrides.pollInterval = pollInterval.map { .seconds($0) }
        if noRecursive { overrides.recursive = false }
        if followSymlinks { overrides.followSymlinks = true }
        if !include.isEmpty { overrides.include = include }
        if !exclude.isEmpty { overrides.exclude = exclude }
        overrides.depth = depth
        if ignoreEditorFiles { overrides.ignoreEditorFiles = true }
        overrides.settle = settle.map { .seconds($0) }
        if waitForRoots { overrides.waitForRoots = true }
        if stableIds { overrides.stableIds = true }

        var configuration: WatchConfiguration
        let source: any FileSystemEventSource
        do {
            configuration = try await WatchConfiguration.load(
                roots: roots,
                overrides: overrides,
                configFile: config.map { WatchOptions.absolute(FilePath(argument: $0)) }
            )
            // The flags' globs byte for byte: the configuration's strings cannot hold a
            // pattern for names that are not UTF-8.
            if !include.isEmpty { configuration.options.filter.include = include.map(PathGlob.init(argument:)) }
            if !exclude.isEmpty { configuration.options.filter.exclude = exclude.map(PathGlob.init(argument:)) }
            if !configuration.options.waitsForMissingRoots {
                for root in roots {
                    if case .failure(let errno) = statusOf(root) {
                        throw FileSystemEventsError.forRoot(root, call: "stat", errno: errno)
                    }
                }
            } else if since != nil {
                throw CommandFailure.badInput("--since needs the roots to exist (a snapshot is of an existing tree); drop --wait-for-roots (or filewatch.waitForRoots / FILEWATCH_WAIT_FOR_ROOTS)")
            }
            source = try configuration.makeSource()
            AutoBackendNotice.warnIfInotifyPassedOver(configuration)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.badInput(String(describing: error))
        }
        if onlyKinds?.contains(.settled) == true && configuration.options.settleQuietPeriod == nil {
            throw CommandFailure.badInput(
                "--only settled would print nothing: no file is settled without a quiet period; add --settle SECONDS (or set filewatch.settle / FILEWATCH_SETTLE)")
        }

        var formatter: any EventFormatter = format == .json
            ? JSONLinesFormatter() : TextFormatter(roots: roots)
        if let onlyKinds {
            formatter = KindFilteringFormatter(base: formatter, kinds: onlyKinds)
        }
        if let since {
            let saved = try CatchUpWatch.loadSnapshot(FilePath(argument: since), for: configuration.options)
            let watch = CatchUpWatch(root: roots[0], source: source, formatter: formatter)
            return try await watch.run(from: saved)
        }
        // In place before the watch starts, so before anything can be printed: a signal sent
        // the instant `ready` appears must find its handler. The watch starts below; a signal
        // that comes first is passed on to it as soon as it exists.
        let pending = PendingRequests<FileSystemEventStream>()
        _ = try TerminationMonitor(
            onFirstSignal: { pending.request { $0.finish() } },
            onOutputClosed: { pending.request { stream in Task { await stream.stop() } } }
        )
        // The lines are written on the watch's own thread as each batch arrives: no hand-over
        // to another thread between the kernel and the pipe (the latency a script sees).
        let printer = UpdatePrinter(formatter: formatter, backendName: source.backendName)
        let stream = source.updates(deliveringTo: printer.print)
        pending.attach(stream)
        do {
            try await stream.run()
        } catch {
            let message = String(describing: error)
            throw printer.isReady ? CommandFailure.failed(message) : CommandFailure.badInput(message)
        }
    }

    /// Whether the root is there, however long its path (`stat(2)` refuses one of `PATH_MAX`
    /// bytes or more, which every backend watches).
    private func statusOf(_ path: FilePath) -> Result<Void, Errno> {
        Syscalls.status(path, followSymlinks: true).map { _ in () }
    }
}

/// Prints each update as it is handed over, on whichever thread hands it over.
final class UpdatePrinter: Sendable {
    private let formatter: any EventFormatter
    private let backendName: String
    private let output = StandardOutput()
    private let readyPrinted = Atomic<Bool>(false)

    init(formatter: any EventFormatter, backendName: String) {
        self.formatter = formatter
        self.backendName = backendName
    }

    /// Whether `ready` was printed: a failure after it is a failed watch (exit 1), before it
    /// bad input (exit 2).
    var isReady: Bool { readyPrinted.load(ordering: .acquiring) }

    @Sendable func print(_ update: FileSystemWatchUpdate) {
        switch update {
        case .scanStarted:
            break
        case .ready(let roots):
            readyPrinted.store(true, ordering: .releasing)
            // What only start-up ran need not stay resident for the rest of the watch; done
            // before `ready`, so that whoever looks once it is printed sees the watch as it runs.
            MemoryRelease.unmapStartUpFilePages()
            output.write(formatter.ready(backend: backendName, roots: roots))
        case .events(let events):
            output.write(formatter.events(events))
        case .diagnostic(let diagnostic):
            StandardError.line("filewatch: warning: \(diagnostic.message)")
        }
    }
}
