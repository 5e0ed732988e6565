import FileSystemEvents
import FileSystemEventsConformance

/// The built-in backends as the conformance suite runs them.
///
/// Polling runs with a short interval so the suite stays fast; nothing else is tuned, and no
/// backend is told it is under test.
enum ConformanceBackends {
    static let polling = ConformanceBackend(name: "polling") { options in
        var options = options
        options.pollInterval = .milliseconds(40)
        return PollingEventSource(options: options)
    }

    static func named(_ backend: FileSystemEventBackend) -> ConformanceBackend {
        ConformanceBackend(name: backend.rawValue) { options in
            try backend.makeSource(options: options)
        }
    }
}
