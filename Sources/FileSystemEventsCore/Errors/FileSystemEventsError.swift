public import SystemPackage

/// Everything that can stop a source, each case phrased so the message says what to do.
///
/// The CLI prints ``description`` as its single line on stderr; host apps can switch on the case.
public enum FileSystemEventsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A root given to the source does not exist.
    case rootNotFound(FilePath)
    /// A path that must be a directory (the directory of a listing) is something else.
    case notADirectory(FilePath)
    /// The process may not read or watch `path`.
    case permissionDenied(FilePath, operation: String)
    /// `inotify_add_watch` failed with `ENOSPC`: every watch allowed by
    /// `fs.inotify.max_user_watches` is in use.
    case watchLimitReached(path: FilePath, currentLimit: Int?)
    /// `inotify_init1` failed with `EMFILE`: `fs.inotify.max_user_instances` is exhausted.
    case instanceLimitReached(currentLimit: Int?)
    /// The backend is known but cannot run here (not compiled in, or the kernel lacks it).
    case backendUnavailable(name: String, reason: String, remedy: String)
    /// No backend has this name.
    case unknownBackend(String, known: [String])
    /// A backend was registered under a name that a built-in or registered backend has.
    case backendNameTaken(String)
    /// A configuration value could not be used; `key` is what the user must fix.
    case invalidConfiguration(key: String, value: String, expected: String)
    /// The configuration file could not be read or parsed.
    case unreadableConfigurationFile(FilePath, reason: String)
    /// An option combination the source cannot honour.
    case invalidOptions(String)
    /// Two tasks (or threads) waited for the next update of one ``FileSystemEventStream`` at
    /// once. The stream has one consumer: the second waiter gets this error and the first goes
    /// on undisturbed. Call `updates()` once per consumer instead.
    case concurrentIteration
    /// A system call failed in a way none of the cases above explains. Out of descriptors
    /// (`EMFILE`, `ENFILE`), the description names the limit to raise.
    case systemCallFailed(call: String, path: FilePath?, errno: Errno)

    /// What went wrong and what to do about it, on one line.
    public var description: String {
        switch self {
        case .rootNotFound(let path):
            return "watch root \(path) does not exist; create it or pass an existing path"
        case .notADirectory(let path):
            return "\(path) is not a directory; pass a directory (to follow a single file, use `filewatch watch`)"
        case .permissionDenied(let path, let operation):
            return "permission denied to \(operation) \(path); grant read and execute access or watch another path"
        case .watchLimitReached(let path, let limit):
            let current = limit.map { "the limit is \($0)" } ?? "the limit is exhausted"
            let sysctl = InotifyLimits.sysctl(for: "watches", limit: limit)
            return "cannot watch \(path): inotify watch limit reached (\(current)); raise it with "
                + "`sysctl \(sysctl)=524288`\(Self.persistence(of: sysctl)), "
                + "or use the polling backend"
        case .instanceLimitReached(let limit):
            let explanation = Self.instanceLimitExplanation(limit)
            return "\(explanation.reason); \(explanation.remedy)"
        case .backendUnavailable(let name, let reason, let remedy):
            return "backend '\(name)' is unavailable: \(reason); \(remedy)"
        case .unknownBackend(let name, let known):
            return "unknown backend '\(name)'; choose one of: \(known.joined(separator: ", "))"
        case .backendNameTaken(let name):
            return "a backend named \(name) exists already (built-in or registered before); register this one under another name"
        case .invalidConfiguration(let key, let value, let expected):
            return "invalid value '\(value)' for configuration key '\(key)': expected \(expected)"
        case .unreadableConfigurationFile(let path, let reason):
            return "cannot read configuration file \(path): \(reason)"
        case .invalidOptions(let message):
            return "invalid options: \(message)"
        case .concurrentIteration:
            return "a FileSystemEventStream was iterated by two tasks at once; iterate each stream from one task, "
                + "or call updates() once per consumer"
        case .systemCallFailed(let call, let path, let errno):
            let failure = path.map { "\(call) failed for \($0): \(errno)" } ?? "\(call) failed: \(errno)"
            // Any call that makes a descriptor can meet these, and the remedy is the same.
            switch errno {
            case .tooManyOpenFiles: return failure + "; raise the open file limit (`ulimit -n`)"
            case .tooManyOpenFilesInSystem: return failure + "; raise the system's open file limit (`sysctl fs.file-max`)"
            // Paths of any length are walked in steps, so this is one name of the path longer
            // than a file system takes.
            case .fileNameTooLong:
                return failure + "; a name in the path is longer than file systems take (NAME_MAX, 255 bytes): no file can have it"
            // A thread refused: the user's process limit, or the system's.
            case .resourceTemporarilyUnavailable where call == "pthread_create":
                return failure + "; no thread can be started: raise the process limit (`ulimit -u`) or the system's (`sysctl kernel.threads-max`)"
            default: return failure
            }
        }
    }

    /// What ``instanceLimitReached(currentLimit:)`` says, in its two parts: what stops an
    /// inotify instance, and what to do. A backend's availability shows them apart
    /// (`filewatch backends`).
    package static func instanceLimitExplanation(_ limit: Int?) -> (reason: String, remedy: String) {
        let current = limit.map { "the limit is \($0)" } ?? "the limit is exhausted"
        let sysctl = InotifyLimits.sysctl(for: "instances", limit: limit)
        return ("cannot create an inotify instance (\(current))",
                "raise it with `sysctl \(sysctl)=1024`\(Self.persistence(of: sysctl)) or stop other watchers")
    }

    /// Where a raised inotify limit is made to last: the system's in /etc/sysctl.d; a user
    /// namespace's is set by whoever makes the namespace (a container's runtime), within the
    /// limits of those above it.
    private static func persistence(of sysctl: String) -> String {
        sysctl.hasPrefix("user.") ? " in this user namespace (its parents' limits apply too)" : " (persist in /etc/sysctl.d)"
    }

    /// Whether `errno` says that no descriptor was left for the call: the process's
    /// (`EMFILE`) or the system's (`ENFILE`). Nothing about the path is wrong then, and the
    /// remedy is the open file limit, whatever the call was.
    package static func isDescriptorShortage(_ errno: Errno) -> Bool {
        errno == .tooManyOpenFiles || errno == .tooManyOpenFilesInSystem
    }

    /// Maps the errno of an operation on a root to the case a user can act on.
    package static func forRoot(_ path: FilePath, call: String, errno: Errno) -> FileSystemEventsError {
        switch errno {
        case .noSuchFileOrDirectory, .notDirectory: return .rootNotFound(path)
        case .permissionDenied, .notPermitted: return .permissionDenied(path, operation: "read")
        default: return .systemCallFailed(call: call, path: path, errno: errno)
        }
    }
}
