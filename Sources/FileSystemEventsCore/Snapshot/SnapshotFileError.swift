public import SystemPackage

/// Why a saved snapshot could not be read or written, each case phrased so the message says
/// what to do.
///
/// A snapshot file that is anything but exactly what was saved is refused with one of these,
/// never turned into events: a wrong starting tree would give a consumer a wrong set of
/// changes, silently. The remedy is almost always the same (take a new snapshot), but the
/// cases keep what is wrong apart, because "another version" and "another root" are usually a
/// deployment mistake while "truncated" and "corrupted" point at the disk or the copy.
public enum SnapshotFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no file at `path`.
    case notFound(FilePath)
    /// The file could not be opened or read.
    case unreadable(FilePath, call: String, errno: Errno)
    /// The snapshot (or its temporary file, or its directory) could not be written.
    case unwritable(FilePath, call: String, errno: Errno)
    /// The file does not start with the snapshot magic number: it is some other file.
    case notASnapshot(FilePath)
    /// The file is a snapshot in a format version this build does not read.
    case unsupportedVersion(FilePath, found: UInt32, supported: UInt32)
    /// The file ends before the length its header records (a copy or write cut short).
    case truncated(FilePath, expectedBytes: UInt64, actualBytes: UInt64)
    /// The checksum does not match or the contents do not decode: the bytes were changed.
    case corrupted(FilePath, reason: String)
    /// The snapshot was taken of another root than the one it is compared with.
    case differentRoot(FilePath, recorded: FilePath, requested: FilePath)

    /// What is wrong and what to do, on one line; most cases say to take a new snapshot.
    public var description: String {
        let retake = "take a new one with `filewatch snapshot DIR --output FILE` (or FileTreeSnapshot.save(to:))"
        switch self {
        case .notFound(let path):
            return "snapshot file \(path) does not exist; \(retake)"
        case .unreadable(let path, let call, let errno):
            return "cannot read snapshot file \(path): \(call) failed: \(errno); check the path and its permissions"
        case .unwritable(let path, let call, let errno):
            return "cannot write snapshot file \(path): \(call) failed: \(errno); "
                + "check that its directory exists, is writable and has free space"
        case .notASnapshot(let path):
            return "\(path) is not a filewatch snapshot (wrong magic number); pass a file made by `filewatch snapshot`"
        case .unsupportedVersion(let path, let found, let supported):
            return "snapshot file \(path) has format version \(found), this filewatch reads version \(supported); \(retake)"
        case .truncated(let path, let expected, let actual):
            return "snapshot file \(path) is truncated (\(actual) of \(expected) bytes); \(retake)"
        case .corrupted(let path, let reason):
            return "snapshot file \(path) is corrupted (\(reason)); \(retake)"
        case .differentRoot(let path, let recorded, let requested):
            return "snapshot file \(path) was taken of \(recorded), not \(requested); "
                + "pass the snapshot of \(requested), or take one with `filewatch snapshot DIR --output FILE`"
        }
    }
}
