import ArgumentParser
import Dispatch
import FileSystemEvents
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `filewatch watch`: the long-running watcher.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch paths and print each change (the default command).",
        discussion: """
            Options may also come from the environment (FILEWATCH_BACKEND, FILEWATCH_LATENCY, \
            FILEWATCH_POLL_INTERVAL, FILEWATCH_RECURSIVE, FILEWATCH_FOLLOW_SYMLINKS, FILEWATCH_INCLUDE, \
            FILEWATCH_EXCLUDE) or a JSON file given with --config ({"filewatch": {"backend": "polling"}}); \
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

    @Option(help: ArgumentHelp("Seconds to gather events before printing them (coalesces bursts).", valueName: "seconds"))
    var latency: Double?

    @Option(help: ArgumentHelp("Seconds between scans for the polling backend.", valueName: "seconds"))
    var pollInterval: Double?

    @Flag(name: .customLong("no-recursive"), help: "Watch only the roots' direct children.")
    var noRecursive = false

    @Flag(help: "Traverse symlinks to directories.")
    var followSymlinks = false

    @Option(help: ArgumentHelp("Report only non-directory items matching this glob (repeatable).", valueName: "glob"))
    var include: [String] = []

    @Option(help: ArgumentHelp("Ignore items matching this glob, and whole directories (repeatable).", valueName: "glob"))
    var exclude: [String] = []

    @Option(help: ArgumentHelp("A JSON configuration file.", valueName: "file"), completion: .file())
    var config: String?

    @Option(help: ArgumentHelp("First print the changes since this snapshot (from `filewatch snapshot`), then `ready`.", valueName: "file"), completion: .file())
    var since: String?

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text
        case json
    }

    func validate() throws {
        if let latency, !(latency >= 0 && latency.isFinite) {
            throw ValidationError("--latency must be a number of seconds, 0 or more (got \(latency))")
        }
        if let pollInterval, !(pollInterval > 0 && pollInterval.isFinite) {
            throw ValidationError("--poll-interval must be a number of seconds above 0 (got \(pollInterval))")
        }
    }

    func run() async throws {
        let roots = (paths.isEmpty ? ["."] : paths).map { WatchOptions.absolute(FilePath($0)) }
        for root in roots {
            if case .failure(let errno) = statusOf(root) {
                throw CommandFailure.badInput(FileSystemEventsError.forRoot(root, call: "stat", errno: errno).description)
            }
        }

        var overrides = WatchConfiguration.Overrides()
        overrides.backend = backend
        overrides.latency = latency
        overrides.pollInterval = pollInterval
        if noRecursive { overrides.recursive = false }
        if followSymlinks { overrides.followSymlinks = true }
        if !include.isEmpty { overrides.include = include }
        if !exclude.isEmpty { overrides.exclude = exclude }

        let configuration: WatchConfiguration
        let source: any FileSystemEventSource
        do {
            configuration = try await WatchConfiguration.load(
                roots: roots,
                overrides: overrides,
                configFile: config.map { WatchOptions.absolute(FilePath($0)) }
            )
            source = try configuration.makeSource()
        } catch {
            throw CommandFailure.badInput(String(describing: error))
        }

        let formatter: any EventFormatter = format == .json
            ? JSONLinesFormatter() : TextFormatter(roots: roots)
        if let since {
            let saved = try CatchUpWatch.loadSnapshot(FilePath(since), for: configuration.options)
            let watch = CatchUpWatch(root: roots[0], source: source, formatter: formatter)
            return try await watch.run(from: saved)
        }
        let output = StandardOutput()
        let stream = source.updates()
        let signals = SignalHandler(signals: [SIGINT, SIGTERM]) { stream.finish() }
        defer { signals.cancel() }

        var isReady = false
        do {
            for try await update in stream {
                switch update {
                case .scanStarted:
                    break
                case .ready(let roots):
                    isReady = true
                    output.write(formatter.ready(backend: source.backendName, roots: roots))
                case .events(let events):
                    output.write(formatter.events(events))
                case .diagnostic(let diagnostic):
                    StandardError.line("filewatch: warning: \(diagnostic.message)")
                }
            }
        } catch {
            let message = String(describing: error)
            throw isReady ? CommandFailure.failed(message) : CommandFailure.badInput(message)
        }
    }

    private func statusOf(_ path: FilePath) -> Result<Void, Errno> {
        var info = stat()
        let result = path.withPlatformString { stat($0, &info) }
        return result == 0 ? .success(()) : .failure(Errno(rawValue: errno))
    }
}

/// Routes SIGINT and SIGTERM to a graceful stop: the watch flushes what it has and the
/// command exits 0. A second signal exits at once.
final class SignalHandler {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], onFirstSignal: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "filewatch.signals")
        let received = SignalCounter()
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if received.increment() == 1 {
                    onFirstSignal()
                } else {
                    exit(128 + number)
                }
            }
            source.resume()
            return source
        }
        signal(SIGPIPE, SIG_IGN)
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}

/// Counts signals; touched only on the signal queue.
final class SignalCounter: @unchecked Sendable {
    private var count = 0

    func increment() -> Int {
        count += 1
        return count
    }
}
