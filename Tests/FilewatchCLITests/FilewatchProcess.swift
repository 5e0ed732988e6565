import Foundation
import FileSystemEventsConformance
import Synchronization

/// The built `filewatch` binary, run as a user would run it, with its output read line by
/// line as it arrives. Waiting is for a line or for the exit, with a deadline; never a sleep.
final class FilewatchProcess: Sendable {
    static var binary: URL {
        // FILEWATCH_TEST_BINARY runs these tests against another build of the CLI, such as
        // the deployment build of scripts/build-cli.sh, whose link differs from the debug one.
        if let path = ProcessInfo.processInfo.environment["FILEWATCH_TEST_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        // The test bundle and the executable are built into the same directory.
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent("filewatch")
    }

    private let process: Process
    private let lines = Mutex<[String]>([])
    private let errorText = Mutex<String>("")
    /// Bumped on every output chunk and at end of file, so a waiter never misses a wakeup
    /// that happened between its check and its wait.
    private let changes = ChangeSignal()
    private let closedPipes = Mutex(0)
    /// How many pipes this object reads (2, or 1 when the test reads stdout itself).
    private let readPipes: Int
    /// The read end of stdout, when the test reads it itself (``readsOutput`` false).
    private let unreadOutput: FileHandle?

    /// - Parameter readsOutput: false to leave stdout to the test (``readOutput(until:timeout:)``,
    ///   ``closeOutput()``): a reader thread blocked in `read` would keep the pipe open.
    /// - Parameter openFileLimit: run under this `ulimit -n` (through `sh`, which `exec`s it).
    /// - Parameter addressSpaceLimit: run under this `ulimit -v`, in bytes (the same way).
    /// - Parameter fileSizeLimit: run under this `ulimit -f`, in bytes (the same way).
    /// - Parameter shellWords: the arguments are words for `sh` to expand (`"$(printf '\\377')"`),
    ///   for bytes that a `String` argument cannot carry.
    /// - Parameter nonBlockingOutput: stdout is a pipe whose write end is `O_NONBLOCK`, as a
    ///   parent that set the flag on its own end of a shared pipe leaves it.
    /// - Parameter unprivilegedUser: run as this user and group ID, without capabilities
    ///   (through `setpriv`; the test must run as root).
    init(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil, readsOutput: Bool = true,
         openFileLimit: Int? = nil, addressSpaceLimit: Int? = nil, fileSizeLimit: Int? = nil, shellWords: Bool = false,
         nonBlockingOutput: Bool = false, unprivilegedUser: UInt32? = nil) throws {
        process = Process()
        let limits = (openFileLimit.map { "ulimit -n \($0) && " } ?? "") + (addressSpaceLimit.map { "ulimit -v \($0 / 1024) && " } ?? "")
            + (fileSizeLimit.map { "ulimit -f \(max(1, $0 / 512)) && " } ?? "")
        // The test process ignores SIGXFSZ, and an ignored signal stays ignored across `exec`:
        // under a file-size limit the CLI starts with the default action, as from a shell.
        let exec = fileSizeLimit == nil ? "exec " : "exec env --default-signal=XFSZ "
        if let user = unprivilegedUser {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--inh-caps=-all", Self.binary.path] + arguments
        } else if shellWords {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", limits + exec + "\"$0\" " + arguments.joined(separator: " "), Self.binary.path]
        } else if !limits.isEmpty {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", limits + exec + "\"$0\" \"$@\"", Self.binary.path] + arguments
        } else {
            process.executableURL = Self.binary
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        for key in env.keys where key.hasPrefix("FILEWATCH_") { env[key] = nil }
        env.merge(environment) { $1 }
        process.environment = env
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        if nonBlockingOutput {
            let descriptor = output.fileHandleForWriting.fileDescriptor
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        readPipes = readsOutput ? 2 : 1
        unreadOutput = readsOutput ? nil : output.fileHandleForReading
        try process.run()
        if readsOutput {
            read(output.fileHandleForReading) { [self] chunk in
                lines.withLock { $0.append(contentsOf: chunk) }
            }
        }
        read(error.fileHandleForReading) { [self] chunk in
            errorText.withLock { $0 += chunk.joined(separator: "\n") + "\n" }
        }
    }

    /// Reads a pipe on a thread of its own, splitting it into lines.
    private func read(_ handle: FileHandle, _ deliver: @escaping @Sendable ([String]) -> Void) {
        let thread = Thread { [self] in
            var splitter = LineSplitter()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                let complete = splitter.append(data)
                if !complete.isEmpty {
                    deliver(complete)
                    notify()
                }
            }
            if !splitter.remainder.isEmpty { deliver([String(decoding: splitter.remainder, as: UTF8.self)]) }
            closedPipes.withLock { $0 += 1 }
            notify()
        }
        thread.start()
    }

    private func notify() { changes.notify() }

    private var generation: Int { changes.generation }
    private var outputClosed: Bool { closedPipes.withLock { $0 == readPipes } }

    /// Reads stdout directly (see `readsOutput`) until a line satisfies `predicate`, waiting in
    /// `poll` up to the deadline.
    func readOutput(until predicate: (String) -> Bool, timeout: Duration = .seconds(60)) throws -> String {
        guard let handle = unreadOutput else { throw CLITestFailure("stdout is read by the helper") }
        let deadline = ContinuousClock.now + timeout
        var splitter = LineSplitter()
        var complete: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            for line in complete {
                lines.withLock { $0.append(line) }
                if predicate(line) { return line }
            }
            complete = []
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw CLITestFailure("timed out reading stdout; stderr: \(standardError)") }
            var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + 1, 60_000))
            guard poll(&descriptor, 1, milliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Foundation.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw CLITestFailure("stdout closed before the line; stderr: \(standardError)") }
            complete = splitter.append(buffer[..<count])
        }
    }

    /// How many bytes the process wrote to stdout that nobody has read yet (see `readsOutput`):
    /// near the pipe's capacity (64 KiB), its writes block.
    var bytesWaitingInOutput: Int {
        guard let handle = unreadOutput else { return 0 }
        var count: CInt = 0
        guard ioctl(handle.fileDescriptor, UInt(FIONREAD), &count) == 0 else { return 0 }
        return Int(count)
    }

    /// Reads stdout directly (see `readsOutput`) to its end, once the process has exited:
    /// whatever it left in the pipe, as raw bytes.
    func drainOutput() throws -> [UInt8] {
        guard let handle = unreadOutput else { throw CLITestFailure("stdout is read by the helper") }
        var drained: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return drained }
            drained += buffer[..<count]
        }
    }

    /// Closes the test's end of stdout: the reader goes away, as when `head` exits.
    func closeOutput() {
        try? unreadOutput?.close()
    }

    var outputLines: [String] { lines.withLock { $0 } }
    var standardError: String { errorText.withLock { $0 } }

    /// Waits until some output line satisfies `predicate`; returns it.
    @discardableResult
    func waitForLine(
        _ what: String,
        timeout: Duration = .seconds(60),
        where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = generation
            if let line = outputLines.first(where: predicate) { return line }
            if outputClosed {
                // The pipes close an instant before the exit is reaped; terminationStatus traps
                // while the process still runs.
                process.waitUntilExit()
                throw CLITestFailure("filewatch exited (\(process.terminationStatus)) before \(what); stderr: \(standardError)")
            }
            guard ContinuousClock.now < deadline else {
                throw CLITestFailure("timed out waiting for \(what); output so far:\n\(outputLines.joined(separator: "\n"))\nstderr so far: \(standardError)")
            }
            await changes.wait(after: seen, until: deadline)
        }
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits until the process is stopped (`T` in `/proc/PID/stat`), as `SIGSTOP` leaves it
    /// a moment after it is sent.
    func waitUntilStopped(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
            // The state follows the command name, which is in parentheses and may hold spaces.
            if let close = stat.lastIndex(of: ")"), stat[close...].dropFirst(2).first == "T" { return }
            guard ContinuousClock.now < deadline else { throw CLITestFailure("the process never stopped: \(stat)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Waits for the process to exit and returns its status.
    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        // Both pipes close when the process exits (nothing else holds their write ends).
        while !outputClosed {
            let seen = generation
            guard ContinuousClock.now < deadline else {
                process.terminate()
                throw CLITestFailure("filewatch did not exit; stderr: \(standardError)")
            }
            if outputClosed { break }
            await changes.wait(after: seen, until: deadline)
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs to completion: (status, stdout lines, stderr).
    /// Runs `executable` (a wrapper such as `unshare` or `prlimit` that runs the binary in
    /// turn) to its end, stdout discarded; its exit status and stderr. Under `timeout(1)`: a
    /// run still going after 60 s is ended, with status 124.
    static func runThrough(_ executable: String, _ arguments: [String]) throws -> (status: Int32, standardError: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["60", executable] + arguments
        let error = Pipe()
        process.standardError = error
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message)
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Int32, [String], String) {
        let process = try FilewatchProcess(arguments, environment: environment)
        let status = try await process.waitForExit()
        return (status, process.outputLines, process.standardError)
    }
}

struct CLITestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Splits a byte stream into lines. Only the bytes not searched yet are searched for a line's
/// end: searching the whole of a 9 MB line again with every 64 KiB read took a debug build
/// over a minute.
struct LineSplitter {
    private(set) var remainder: [UInt8] = []
    private var searched = 0

    /// The lines `bytes` completes, in order; what follows the last newline is kept.
    mutating func append(_ bytes: some Collection<UInt8>) -> [String] {
        remainder.append(contentsOf: bytes)
        var lineStart = 0
        var lines: [String] = []
        while let newline = remainder[searched...].firstIndex(of: 0x0A) {
            lines.append(String(decoding: remainder[lineStart..<newline], as: UTF8.self))
            lineStart = newline + 1
            searched = lineStart
        }
        remainder.removeSubrange(..<lineStart)
        searched = remainder.count
        return lines
    }
}
