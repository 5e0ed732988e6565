#if os(Linux)
extension InotifyWatch {
    /// What one watch descriptor stands for: the directories of the tree it watches, the
    /// single-file roots watched through it, and the followed symlinks to files whose target it
    /// is on.
    ///
    /// ``InotifyWatch/targets`` holds one of these for every watched directory of the tree, and
    /// nearly every one is a single directory and nothing else. So that directory is stored
    /// inline and the rest, rare, in one shared box, copied on write: 16 bytes a value where the
    /// three lists side by side took 32, and the dictionary's values are a quarter of a megabyte
    /// less on a tree of 10,000 directories (its heap profile put 578 KB there before).
    struct WatchTargets {
        private var firstDirectory: WatchedDirectory?
        private var rest: Rest?

        /// The uncommon targets; `nil` while there are none.
        private final class Rest {
            var otherDirectories: [WatchedDirectory] = []
            var fileRoots: [Int] = []
            var fileLinks: [FollowedFileLink] = []

            init(copying other: Rest?) {
                if let other {
                    otherDirectories = other.otherDirectories
                    fileRoots = other.fileRoots
                    fileLinks = other.fileLinks
                }
            }

            var isEmpty: Bool { otherDirectories.isEmpty && fileRoots.isEmpty && fileLinks.isEmpty }
        }

        init() {}

        /// The directories, in the order they were added.
        var directories: WatchedDirectoryList {
            get { WatchedDirectoryList(first: firstDirectory, others: rest?.otherDirectories ?? []) }
            set {
                firstDirectory = newValue.firstNode
                let others = newValue.otherNodes
                if !others.isEmpty || rest != nil { modifyRest { $0.otherDirectories = others } }
            }
        }

        var fileRoots: [Int] {
            get { rest?.fileRoots ?? [] }
            set { if !newValue.isEmpty || rest != nil { modifyRest { $0.fileRoots = newValue } } }
        }

        /// Symlinks to files (under `followsSymlinks`) whose target this watch is on.
        var fileLinks: [FollowedFileLink] {
            get { rest?.fileLinks ?? [] }
            set { if !newValue.isEmpty || rest != nil { modifyRest { $0.fileLinks = newValue } } }
        }

        var isEmpty: Bool { firstDirectory == nil && rest == nil }

        /// Runs `body` on a box of this value's own, and drops the box once it holds nothing.
        private mutating func modifyRest(_ body: (Rest) -> Void) {
            let box: Rest
            if isKnownUniquelyReferenced(&rest), let existing = rest {
                box = existing
            } else {
                box = Rest(copying: rest)
                rest = box
            }
            body(box)
            if box.isEmpty { rest = nil }
        }
    }
}
#endif
