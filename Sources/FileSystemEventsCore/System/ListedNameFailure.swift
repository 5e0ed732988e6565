package import SystemPackage

/// What a failed `statx` of a name a directory has just listed says about that name.
///
/// Every walk that lists a directory and then examines its names (a polling scan, a kernel
/// backend's crawl and rescans) meets the same three cases, and must answer them alike, or the
/// backends disagree about what a directory holds:
///
/// - The name is gone: removed or replaced since the listing was read. It is left out; a
///   kernel backend has its removal in the queue, and a polling scan never saw it.
/// - The directory may be read but not searched (mode `r--`, `EACCES`): none of its names can
///   be examined, so the directory is as unreadable as one that cannot be listed, and keeps what
///   it held. Left out one by one, its names were told removed (polling), or never told at all
///   once a `chmod` made them searchable (the kernel backends: that `chmod` is an event on the
///   directory, not on what lies below it).
/// - Anything else (`EIO`, `ESTALE` on a network file system, `ENOMEM`) concerns this name, now:
///   it neither empties its directory nor holds up the rest of it. Each walk keeps what it knew
///   of the name (the previous scan's entry, or the listing's type).
package enum ListedNameFailure: Equatable, Sendable {
    case gone
    case directoryNotSearchable
    case nameNotExaminable(Errno)

    /// Classifies the errno of `statx(directory, name)` for a name just listed.
    package init(_ errno: Errno) {
        switch errno {
        case .noSuchFileOrDirectory, .notDirectory: self = .gone
        case .permissionDenied: self = .directoryNotSearchable
        default: self = .nameNotExaminable(errno)
        }
    }
}
