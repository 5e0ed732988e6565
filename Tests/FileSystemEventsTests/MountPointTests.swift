import FileSystemEvents
import FileSystemEventsConformance
@testable import FileSystemEventsCore
import Foundation
import Testing

/// Mount points inside a watched tree, on every backend.
///
/// A directory listing's `d_ino` for a mount point is the inode of the directory it covers,
/// not of the file system's root found there, and a bind mount of a directory of the same file
/// system shows another directory's inode on the same device. A backend that takes a
/// directory's identity from the listing alone has to notice both, or it calls the directory
/// stale and never watches below it, or reports it with an identity nothing on disk has.
@Suite(.serialized) struct MountPointTests {
    @Test("a tmpfs and a bind mount below the root: changes inside both are reported, with the mounted identity")
    func mountsBelowTheRoot() async throws {
        for backend in availableBackends {
            let tree = try ScratchTree()
            // Kept until the unmounts below have run: deleted with a file system still mounted
            // in it, the tree could not be removed.
            defer { withExtendedLifetime(tree) {} }
            try tree.makeDirectories("watched/sub/mnt")
            try tree.makeDirectories("watched/sub/bound")
            try tree.makeDirectories("outside/deeper")
            let mountPoint = tree.path("watched/sub/mnt")
            guard mount("tmpfs", mountPoint.string, "tmpfs", 0, nil) == 0 else {
                return  // not root (no CAP_SYS_ADMIN): no file system to mount here
            }
            defer { umount2(mountPoint.string, Int32(MNT_DETACH)) }
            let bound = tree.path("watched/sub/bound")
            guard mount(tree.path("outside").string, bound.string, nil, UInt(MS_BIND), nil) == 0 else {
                Issue.record("bind-mounting failed: \(errno)")
                return
            }
            defer { umount2(bound.string, Int32(MNT_DETACH)) }
            try tree.makeDirectories("watched/sub/mnt/inside")
            try tree.write("watched/sub/mnt/inside/old.txt", "o")

            var options = WatchOptions(roots: [tree.path("watched")])
            options.pollInterval = .milliseconds(20)
            let source = try backend.makeSource(options: options)
            let marker = "marker-\(tree.uniqueNumber())"
            let observed = try await observe(source.updates(), onReady: {
                try tree.changeMode("watched/sub/mnt", to: 0o750)
                try tree.write("watched/sub/mnt/inside/new.txt", "n")
                try tree.write("watched/sub/bound/deeper/new.txt", "n")
                try tree.write(RelativePath("watched/\(marker)"), "m")
            }, untilEvent: { $0.path.lastComponent?.string == marker })
            let events = observed.events
            let mounted = try Syscalls.status(mountPoint).get().identity
            // Nothing happened to the mount point but a chmod: a backend that lost track of it
            // at start-up reports it removed and created again.
            #expect(!events.contains { $0.path == mountPoint && $0.kind != .attributesChanged },
                    "\(backend): the mount point was reported as more than a change of mode: \(events)")
            let attributes = events.last { $0.path == mountPoint && $0.kind == .attributesChanged }
            #expect(attributes != nil, "\(backend): no change of the mount point's mode: \(events)")
            if let identity = attributes?.identity {
                #expect(identity == mounted, "\(backend): the mount point reported as \(identity), not the mounted root \(mounted)")
            }
            let inside = events.first { $0.path == tree.path("watched/sub/mnt/inside/new.txt") && $0.kind == .created }
            #expect(inside != nil, "\(backend): nothing created inside the tmpfs: \(events)")
            if let identity = inside?.identity {
                #expect(identity.device == mounted.device, "\(backend): a file in the tmpfs reported on device \(identity.device)")
            }
            #expect(events.contains { $0.path == tree.path("watched/sub/bound/deeper/new.txt") && $0.kind == .created },
                    "\(backend): nothing created inside the bind mount: \(events)")
        }
    }

    @Test("a bind mount of the root inside the tree: the watch starts, and a change beside it is reported")
    func bindMountLoop() async throws {
        for backend in availableBackends {
            let tree = try ScratchTree()
            defer { withExtendedLifetime(tree) {} }
            // Enough directories beside the mount that a start-up walking ahead of the model
            // (the inotify backend's prefetcher) is well into them when it meets the second
            // view of the tree, which is walked once (a bind mount shows no mount below it,
            // so the view ends at its own `a/loop`).
            for index in 0..<50 { try tree.makeDirectories(RelativePath("watched/d\(index)/inner")) }
            try tree.makeDirectories("watched/a/loop")
            let loop = tree.path("watched/a/loop")
            guard mount(tree.path("watched").string, loop.string, nil, UInt(MS_BIND), nil) == 0 else {
                return  // not root (no CAP_SYS_ADMIN)
            }
            defer { umount2(loop.string, Int32(MNT_DETACH)) }
            var options = WatchOptions(roots: [tree.path("watched")])
            options.pollInterval = .milliseconds(20)
            let source = try backend.makeSource(options: options)
            let marker = "marker-\(tree.uniqueNumber())"
            let observed = try await observe(source.updates(), onReady: {
                try tree.write("watched/d7/inner/new.txt", "n")
                try tree.write(RelativePath("watched/\(marker)"), "m")
            }, untilEvent: { $0.path.lastComponent?.string == marker && !$0.path.string.contains("/loop/") })
            #expect(observed.events.contains { $0.path == tree.path("watched/d7/inner/new.txt") && $0.kind == .created },
                    "\(backend): the file created beside the mount was not reported: \(observed.events.prefix(20))")
        }
    }
}
