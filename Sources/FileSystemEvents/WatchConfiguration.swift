public import Configuration
public import FileSystemEventsCore
public import SystemPackage
import PlatformLibc

/// A backend and its options, read through swift-configuration so the same keys work from
/// code, the environment, a JSON file and the CLI.
///
/// | key | environment | JSON (`{"filewatch": {...}}`) | value |
/// |---|---|---|---|
/// | `filewatch.backend` | `FILEWATCH_BACKEND` | `"backend"` | `auto`, `polling`, `inotify`, `inotifytools` |
/// | `filewatch.latency` | `FILEWATCH_LATENCY` | `"latency"` | seconds, 0 to 86400 |
/// | `filewatch.pollInterval` | `FILEWATCH_POLL_INTERVAL` | `"pollInterval"` | seconds, 0.001 to 86400 |
/// | `filewatch.recursive` | `FILEWATCH_RECURSIVE` | `"recursive"` | `true`/`false` |
/// | `filewatch.followSymlinks` | `FILEWATCH_FOLLOW_SYMLINKS` | `"followSymlinks"` | `true`/`false` |
/// | `filewatch.include` | `FILEWATCH_INCLUDE` (comma-separated) | `"include"` | globs |
/// | `filewatch.exclude` | `FILEWATCH_EXCLUDE` (comma-separated) | `"exclude"` | globs |
/// | `filewatch.bufferLimit` | `FILEWATCH_BUFFER_LIMIT` | `"bufferLimit"` | events, > 0 |
/// | `filewatch.depth` | `FILEWATCH_DEPTH` | `"depth"` | directory levels below a root, ≥ 0 |
/// | `filewatch.ignoreEditorFiles` | `FILEWATCH_IGNORE_EDITOR_FILES` | `"ignoreEditorFiles"` | `true`/`false` |
/// | `filewatch.settle` | `FILEWATCH_SETTLE` | `"settle"` | quiet period in seconds, 0 to 86400: report `settled` |
///
/// Precedence: values set in code (or CLI flags) over the environment over the file.
/// A value of the wrong type or out of range is a
/// ``FileSystemEventsError/invalidConfiguration(key:value:expected:)`` naming the key, never
/// a silent default.
public struct WatchConfiguration: Sendable {
    /// The built-in backend chosen (`auto` when a registered one is: see ``registeredBackend``).
    public var backend: FileSystemEventBackend
    /// The backend chosen when the name is one registered with
    /// ``FileSystemEventBackendRegistry``; it takes precedence over ``backend``.
    public var registeredBackend: RegisteredBackend?
    /// The options ``makeSource()`` hands the backend as they are; ``makeSource(watching:)``
    /// replaces the roots, recursion, symlinks, filter and latency in them.
    public var options: WatchOptions

    /// A configuration made in code, reading no provider; the options are checked only when a
    /// source is made (``WatchOptions/validate()``).
    public init(backend: FileSystemEventBackend, options: WatchOptions) {
        self.backend = backend
        self.options = options
    }

    /// A configuration that watches with a registered backend.
    public init(registeredBackend: RegisteredBackend, options: WatchOptions) {
        self.backend = .auto
        self.registeredBackend = registeredBackend
        self.options = options
    }

    /// The chosen backend's name as configuration spells it.
    public var backendName: String { registeredBackend?.name ?? backend.rawValue }

    /// The configuration keys, relative to the `filewatch` scope.
    public enum Key: String, CaseIterable, Sendable {
        /// A backend's name, matched case-insensitively: a built-in one (``WatchConfiguration/backend``)
        /// or a registered one (``WatchConfiguration/registeredBackend``).
        case backend
        /// ``WatchOptions/latency``, in seconds.
        case latency
        /// ``WatchOptions/pollInterval``, in seconds.
        case pollInterval
        /// ``WatchOptions/isRecursive``.
        case recursive
        /// ``WatchOptions/followsSymlinks``.
        case followSymlinks
        /// ``PathFilter/include``: globs, comma-separated in a single string.
        case include
        /// ``PathFilter/exclude``: globs, comma-separated in a single string.
        case exclude
        /// ``WatchOptions/bufferLimit``, above 0.
        case bufferLimit
        /// ``PathFilter/maximumDepth``, within ``WatchOptions/depthRange``.
        case depth
        /// ``PathFilter/ignoresEditorFiles``.
        case ignoreEditorFiles
        /// ``WatchOptions/settleQuietPeriod``, in seconds.
        case settle
        /// ``WatchOptions/waitsForMissingRoots`` (`FILEWATCH_WAIT_FOR_ROOTS`, `true`/`false`).
        case waitForRoots
        /// ``WatchOptions/stampsStableIDs`` (`FILEWATCH_STABLE_IDS`, `true`/`false`).
        case stableIds

        /// The full key, as users write it: `filewatch.pollInterval`.
        public var fullName: String { "filewatch.\(rawValue)" }

        /// The environment variable swift-configuration maps the key to.
        public var environmentName: String {
            var name = "FILEWATCH_"
            for character in rawValue {
                if character.isUppercase { name += "_" }
                name += character.uppercased()
            }
            return name
        }

        var displayName: String { "\(fullName) (\(environmentName))" }

        /// The key as the place its value came from spells it, for an error about the value.
        func displayName(in source: Source) -> String {
            switch source {
            case .unknown: displayName
            case .code: fullName
            case .environment: "\(fullName) (environment variable \(environmentName))"
            case .file(let path): "\(fullName) (\"\(rawValue)\" in \(path))"
            }
        }

        /// Where a key's value came from.
        enum Source {
            /// Any provider: the key is named with its environment variable.
            case unknown
            /// Code, or a command-line flag.
            case code
            case environment
            case file(FilePath)
        }
    }

    /// Reads the `filewatch` keys from `config`, on top of `defaults`.
    public init(reading config: ConfigReader, roots: [FilePath]) throws(FileSystemEventsError) {
        try self.init(reading: config, roots: roots, sourceOf: { _ in .unknown })
    }

    /// The same, where an error about a value names it as `sourceOf` says it was given: a
    /// user who wrote `"latency": -1` in a file looks for that, not for `FILEWATCH_LATENCY`.
    init(reading config: ConfigReader, roots: [FilePath], sourceOf: @escaping (Key) -> Key.Source) throws(FileSystemEventsError) {
        let scoped = config.scoped(to: "filewatch")
        let reader = StrictReader(config: scoped, sourceOf: sourceOf)
        var options = WatchOptions(roots: roots)

        var backend = FileSystemEventBackend.auto
        var registered: RegisteredBackend?
        if let name = try reader.string(.backend) {
            if let builtIn = FileSystemEventBackend(rawValue: name.lowercased()) {
                backend = builtIn
            } else if let found = FileSystemEventBackendRegistry.shared.backend(named: name) {
                registered = found
            } else {
                throw .invalidConfiguration(key: Key.backend.displayName(in: sourceOf(.backend)), value: name,
                                            expected: "one of \(FileSystemEventBackendRegistry.shared.knownNames.joined(separator: ", "))")
            }
        }
        if let seconds = try reader.double(.latency) {
            options.latency = try Self.duration(seconds, key: .latency, in: sourceOf(.latency), range: WatchOptions.latencyRange)
        }
        if let seconds = try reader.double(.pollInterval) {
            options.pollInterval = try Self.duration(seconds, key: .pollInterval, in: sourceOf(.pollInterval), range: WatchOptions.pollIntervalRange)
        }
        if let recursive = try reader.bool(.recursive) { options.isRecursive = recursive }
        if let follow = try reader.bool(.followSymlinks) { options.followsSymlinks = follow }
        if let include = try reader.strings(.include) { options.filter.include = include.map(PathGlob.init) }
        if let exclude = try reader.strings(.exclude) { options.filter.exclude = exclude.map(PathGlob.init) }
        if let limit = try reader.int(.bufferLimit) {
            guard limit > 0 else {
                throw .invalidConfiguration(key: Key.bufferLimit.displayName(in: sourceOf(.bufferLimit)), value: "\(limit)",
                                            expected: "a whole number above 0")
            }
            options.bufferLimit = limit
        }
        if let depth = try reader.int(.depth) {
            guard WatchOptions.depthRange.contains(depth) else {
                throw .invalidConfiguration(key: Key.depth.displayName(in: sourceOf(.depth)), value: "\(depth)",
                                            expected: "a whole number of directory levels from 0 to \(WatchOptions.depthRange.upperBound)")
            }
            options.filter.maximumDepth = depth
        }
        if let ignore = try reader.bool(.ignoreEditorFiles) { options.filter.ignoresEditorFiles = ignore }
        if let seconds = try reader.double(.settle) {
            options.settleQuietPeriod = try Self.duration(seconds, key: .settle, in: sourceOf(.settle), range: WatchOptions.latencyRange)
        }
        if let wait = try reader.bool(.waitForRoots) { options.waitsForMissingRoots = wait }
        if let stamps = try reader.bool(.stableIds) { options.stampsStableIDs = stamps }
        self.init(backend: backend, options: options)
        self.registeredBackend = registered
    }

    /// Seconds as a `Duration`, checked against `range` first: a `Double` beyond `Int64`
    /// nanoseconds would trap in the conversion, so the range check must come before it.
    private static func duration(_ seconds: Double, key: Key, in source: Key.Source, range: ClosedRange<Duration>) throws(FileSystemEventsError) -> Duration {
        let low = Self.seconds(range.lowerBound), high = Self.seconds(range.upperBound)
        guard seconds.isFinite, seconds >= low, seconds <= high else {
            let lowText = low == 0 ? "0" : "\(low)"
            throw .invalidConfiguration(key: key.displayName(in: source), value: "\(seconds)",
                                        expected: "a number of seconds from \(lowText) to \(Int(high))")
        }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Values given in code or on a command line, which take precedence over everything else.
    public struct Overrides: Sendable {
        /// Overrides `filewatch.backend`: a built-in or registered backend's name; an unknown one
        /// makes ``WatchConfiguration/load(roots:overrides:configFile:environment:)`` throw.
        public var backend: String?
        /// ``WatchOptions/latency``.
        public var latency: Duration?
        /// ``WatchOptions/pollInterval``.
        public var pollInterval: Duration?
        /// Overrides `filewatch.recursive` (``WatchOptions/isRecursive``).
        public var recursive: Bool?
        /// Overrides `filewatch.followSymlinks` (``WatchOptions/followsSymlinks``).
        public var followSymlinks: Bool?
        /// Overrides `filewatch.include`: globs for ``PathFilter/include``.
        public var include: [String]?
        /// Overrides `filewatch.exclude`: globs for ``PathFilter/exclude``.
        public var exclude: [String]?
        /// Overrides `filewatch.bufferLimit` (``WatchOptions/bufferLimit``); must be above 0.
        public var bufferLimit: Int?
        /// Overrides `filewatch.depth` (``PathFilter/maximumDepth``); must be within
        /// ``WatchOptions/depthRange``.
        public var depth: Int?
        /// Overrides `filewatch.ignoreEditorFiles` (``PathFilter/ignoresEditorFiles``).
        public var ignoreEditorFiles: Bool?
        /// The settle quiet period (``WatchOptions/settleQuietPeriod``).
        public var settle: Duration?
        /// Wait for missing roots (``WatchOptions/waitsForMissingRoots``).
        public var waitForRoots: Bool?
        /// Stamp and report stable IDs (``WatchOptions/stampsStableIDs``).
        public var stableIds: Bool?

        /// No overrides: every key comes from the environment or the file.
        public init() {}

        var values: [AbsoluteConfigKey: ConfigValue] {
            var values: [AbsoluteConfigKey: ConfigValue] = [:]
            func set(_ key: Key, _ content: ConfigContent?) {
                if let content { values[AbsoluteConfigKey(["filewatch", key.rawValue])] = ConfigValue(content, isSecret: false) }
            }
            set(.backend, backend.map { .string($0) })
            set(.latency, latency.map { .double(WatchConfiguration.seconds($0)) })
            set(.pollInterval, pollInterval.map { .double(WatchConfiguration.seconds($0)) })
            set(.recursive, recursive.map { .bool($0) })
            set(.followSymlinks, followSymlinks.map { .bool($0) })
            set(.include, include.map { .stringArray($0) })
            set(.exclude, exclude.map { .stringArray($0) })
            set(.bufferLimit, bufferLimit.map { .int($0) })
            set(.depth, depth.map { .int($0) })
            set(.ignoreEditorFiles, ignoreEditorFiles.map { .bool($0) })
            set(.settle, settle.map { .double(WatchConfiguration.seconds($0)) })
            set(.waitForRoots, waitForRoots.map { .bool($0) })
            set(.stableIds, stableIds.map { .bool($0) })
            return values
        }
    }

    /// The usual hierarchy: `overrides`, then the environment, then the JSON file at
    /// `configFile` (if any).
    ///
    /// - Parameters:
    ///   - roots: what to watch; the keys say how.
    ///   - overrides: values from code or command-line flags, which win over everything.
    ///   - configFile: a JSON file (`{"filewatch": {...}}`) read last, if given.
    ///   - environment: the variables to read; the process environment by default.
    public static func load(
        roots: [FilePath],
        overrides: Overrides = Overrides(),
        configFile: FilePath? = nil,
        environment: [String: String]? = nil
    ) async throws(FileSystemEventsError) -> WatchConfiguration {
        let overridden = overrides.values
        var providers: [any ConfigProvider] = [InMemoryProvider(name: "overrides", values: overridden)]
        if let environment {
            providers.append(EnvironmentVariablesProvider(environmentVariables: environment))
        } else {
            providers.append(EnvironmentVariablesProvider())
        }
        if let configFile {
            providers.append(InMemoryProvider(name: "configuration file", values: try ConfigurationFile.values(at: configFile)))
        }
        // The first provider that has the key gave its value, in the order above.
        func sourceOf(_ key: Key) -> Key.Source {
            if overridden[AbsoluteConfigKey(["filewatch", key.rawValue])] != nil { return .code }
            let inEnvironment = environment.map { $0[key.environmentName] != nil } ?? (getenv(key.environmentName) != nil)
            if inEnvironment { return .environment }
            if let configFile { return .file(configFile) }
            return .unknown
        }
        return try WatchConfiguration(reading: ConfigReader(providers: providers), roots: roots, sourceOf: sourceOf)
    }

    /// Makes the configured source.
    public func makeSource() throws(FileSystemEventsError) -> any FileSystemEventSource {
        if let registeredBackend { return try registeredBackend.makeSource(options: options) }
        return try backend.makeSource(options: options)
    }

    /// A source for what an app feature decided to watch (`DirectoryListing`, `FileFollower`:
    /// the roots, recursion, symlinks, filter, latency, whether directories whose entries
    /// changed are reported and whether the source's first tree is wanted, in
    /// `featureOptions`), watched the way this configuration says
    /// (backend, poll interval, buffer limit, logger, settling).
    public func makeSource(watching featureOptions: WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource {
        var merged = options
        merged.roots = featureOptions.roots
        merged.isRecursive = featureOptions.isRecursive
        merged.followsSymlinks = featureOptions.followsSymlinks
        merged.filter = featureOptions.filter
        merged.latency = featureOptions.latency
        merged.reportsDirectoryContentChanges = featureOptions.reportsDirectoryContentChanges
        // A feature that starts from the source's own first tree (a listing over polling) must
        // get it: without it `list --live --backend polling` listed the disk as it was a moment
        // after the first scan, and the first scan's differences, replayed over that, lost
        // renamed directories' children for good.
        merged.capturesInitialState = featureOptions.capturesInitialState || options.capturesInitialState
        if let registeredBackend { return try registeredBackend.makeSource(options: merged) }
        return try backend.makeSource(options: merged)
    }
}

/// Reads typed values and turns "present but unusable" into an error naming the key, where
/// `ConfigReader`'s plain getters would quietly return `nil`.
private struct StrictReader {
    let config: ConfigReader
    let sourceOf: (WatchConfiguration.Key) -> WatchConfiguration.Key.Source

    func string(_ key: WatchConfiguration.Key) throws(FileSystemEventsError) -> String? {
        if let value = config.string(forKey: ConfigKey(key.rawValue)) { return value }
        return try absentOrInvalid(key, expected: "a string")
    }

    func double(_ key: WatchConfiguration.Key) throws(FileSystemEventsError) -> Double? {
        if let value = config.double(forKey: ConfigKey(key.rawValue)) { return value }
        if let value = config.int(forKey: ConfigKey(key.rawValue)) { return Double(value) }
        return try absentOrInvalid(key, expected: "a number of seconds")
    }

    func int(_ key: WatchConfiguration.Key) throws(FileSystemEventsError) -> Int? {
        if let value = config.int(forKey: ConfigKey(key.rawValue)) { return value }
        return try absentOrInvalid(key, expected: "a whole number")
    }

    func bool(_ key: WatchConfiguration.Key) throws(FileSystemEventsError) -> Bool? {
        if let value = config.bool(forKey: ConfigKey(key.rawValue)) { return value }
        return try absentOrInvalid(key, expected: "true or false")
    }

    func strings(_ key: WatchConfiguration.Key) throws(FileSystemEventsError) -> [String]? {
        if let value = config.stringArray(forKey: ConfigKey(key.rawValue)) { return value.filter { !$0.isEmpty } }
        if let value = config.string(forKey: ConfigKey(key.rawValue)) {
            return value.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
        }
        return try absentOrInvalid(key, expected: "a list of glob patterns")
    }

    private func absentOrInvalid<T>(_ key: WatchConfiguration.Key, expected: String) throws(FileSystemEventsError) -> T? {
        let configKey = ConfigKey(key.rawValue)
        let present: String? =
            config.string(forKey: configKey)
            ?? config.double(forKey: configKey).map { "\($0)" }
            ?? config.int(forKey: configKey).map { "\($0)" }
            ?? config.bool(forKey: configKey).map { "\($0)" }
            ?? config.stringArray(forKey: configKey).map { $0.joined(separator: ",") }
        guard let present else { return nil }
        throw .invalidConfiguration(key: key.displayName(in: sourceOf(key)), value: present, expected: expected)
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
