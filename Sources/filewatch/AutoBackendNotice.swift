import FileSystemEvents
import SystemPackage

/// The warning printed when `auto` watches by polling only because the kernel refused inotify
/// right now (most often: other watchers hold the user's inotify instances). The watch works,
/// but scans where it would have been told, which costs CPU on a large tree: whoever runs it
/// should know why, and what to raise to get inotify back. A root on a network or FUSE file
/// system is polled whatever the kernel allows, so it gets no warning.
enum AutoBackendNotice {
    static func warnIfInotifyPassedOver(_ configuration: WatchConfiguration) {
        #if os(Linux)
        guard configuration.backend == .auto, configuration.registeredBackend == nil,
              FileSystemEventBackendRegistry.shared.autoPreference == nil,
              FileSystemEventBackend.inotify.buildAvailability.isAvailable,
              case .unavailable(let reason, let remedy) = FileSystemEventBackend.inotify.availability,
              FileSystemEventBackend.autoChoice(for: configuration.options.roots) == FileSystemEventBackend.polling.rawValue
        else { return }
        StandardError.line("filewatch: warning: auto chose polling: \(reason); \(remedy)")
        #endif
    }
}
