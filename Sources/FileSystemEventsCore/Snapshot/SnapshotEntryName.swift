/// An entry's name and, for a directory a scan descended into, its listing, in the 12 bytes
/// of a ``SnapshotName``.
///
/// A snapshot entry used to keep the listing in a field of its own: 8 bytes in every entry
/// for what about 1 % of them (the directories) use, 7.6 MiB of a million-entry snapshot.
/// Here a directory's entry keeps its name and listing in one small object instead
/// (``NamedListing``, 48 bytes of malloc, once per directory), in the place where a file's
/// entry keeps its name: one enum of three forms, no larger than the name's two.
package struct SnapshotEntryName {
    private enum Storage {
        case inline(SnapshotName.InlineBytes)
        case heap([UInt8])
        case listing(NamedListing)
    }

    private var storage: Storage

    package init(name: SnapshotName, listing: SnapshotDirectory?) {
        if let listing {
            storage = .listing(NamedListing(name: name, directory: listing))
        } else {
            storage = Self.storage(of: name)
        }
    }

    @inline(__always)
    private static func storage(of name: SnapshotName) -> Storage {
        switch name.storage {
        case .inline(let bytes): return .inline(bytes)
        case .heap(let bytes): return .heap(bytes)
        }
    }

    package var name: SnapshotName {
        @inline(__always) get {
            switch storage {
            case .inline(let bytes): return SnapshotName(storage: .inline(bytes))
            case .heap(let bytes): return SnapshotName(storage: .heap(bytes))
            case .listing(let named): return named.name
            }
        }
        set {
            if case .listing(let named) = storage {
                storage = .listing(NamedListing(name: newValue, directory: named.directory))
            } else {
                storage = Self.storage(of: newValue)
            }
        }
    }

    package var listing: SnapshotDirectory? {
        @inline(__always) get {
            if case .listing(let named) = storage { return named.directory }
            return nil
        }
        set {
            if let newValue {
                storage = .listing(NamedListing(name: name, directory: newValue))
            } else if case .listing(let named) = storage {
                storage = Self.storage(of: named.name)
            }
        }
    }
}

/// A directory entry's name and listing (``SnapshotEntryName``). Immutable: an entry given a
/// new name or listing gets a new one, so copies of the entry (a scan's, a diff's) never
/// change under each other.
final class NamedListing {
    let name: SnapshotName
    let directory: SnapshotDirectory

    init(name: SnapshotName, directory: SnapshotDirectory) {
        self.name = name
        self.directory = directory
    }
}
