import PlatformLibc
import Dispatch

/// Runs a real program beside the watch (`tar`, `cp`), because what a backend must survive is
/// how those tools write (their buffer sizes, their `utimensat` after the last write, their
/// temporary names), not an imitation of it.
enum ChildProcess {
    /// Runs `arguments` (the first is looked up on `PATH`) to completion; throws unless it
    /// exits with status 0. The wait happens off the cooperative pool, so the watch's consumer
    /// keeps running while the program works.
    static func run(_ arguments: [String]) async throws {
        let pid = try spawn(arguments)
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<CInt, Never>) in
            DispatchQueue.global().async {
                var status: CInt = 0
                while waitpid(pid, &status, 0) < 0 {
                    if errno != EINTR {
                        status = -1
                        break
                    }
                }
                continuation.resume(returning: status)
            }
        }
        if status != 0 {
            throw ConformanceFailure("\(arguments.joined(separator: " ")) failed (wait status \(status))")
        }
    }

    private static func spawn(_ arguments: [String]) throws -> pid_t {
        guard let program = arguments.first else { throw ConformanceFailure("no program to run") }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, program, nil, nil, argv, environ)
        if result != 0 {
            throw ConformanceFailure("could not run \(program): \(String(cString: strerror(result)))")
        }
        return pid
    }
}
