// swift-tools-version: 6.1
import PackageDescription

// libinotifytools is GPL-2. Its backend is compiled only when a host app opts into the
// `InotifyTools` trait, so nobody links GPL code or needs the C library by accident.
let inotifyToolsTrait = "InotifyTools"

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "filewatch",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FileSystemEvents", targets: ["FileSystemEvents"]),
        .library(name: "FileSystemEventsApps", targets: ["FileSystemEventsApps"]),
        .library(name: "FileSystemEventsConformance", targets: ["FileSystemEventsConformance"]),
        .library(name: "FileSystemEventsFoundation", targets: ["FileSystemEventsFoundation"]),
        .executable(name: "filewatch", targets: ["filewatch"]),
    ],
    traits: [
        .trait(
            name: inotifyToolsTrait,
            description: "Builds the libinotifytools backend (GPL-2; needs Debian's libinotifytools0-dev)."
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // No traits: its JSON trait needs full Foundation (JSONSerialization), and with it ICU,
        // ~6 MiB resident in every process; ConfigurationFile reads the JSON file instead.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
    ],
    targets: [
        // C declarations that Swift's Glibc module hides behind _GNU_SOURCE (statx, pipe2).
        .target(name: "CFileSystemEventsShims"),

        // The platform's C library (Glibc, Musl or Darwin), imported in one place.
        .target(name: "PlatformLibc", swiftSettings: strictSettings),

        // The contract: event model, the FileSystemEventSource protocol, options, errors,
        // the syscall layer, snapshots and their diff, filters, delivery.
        .target(
            name: "FileSystemEventsCore",
            dependencies: [
                "PlatformLibc",
                "CFileSystemEventsShims",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),

        // Backends, side by side.
        .target(
            name: "FileSystemEventsPolling",
            dependencies: ["FileSystemEventsCore"],
            swiftSettings: strictSettings
        ),

        .target(
            name: "FileSystemEventsInotify",
            dependencies: ["FileSystemEventsCore", "CFileSystemEventsShims"],
            swiftSettings: strictSettings
        ),

        // libinotifytools (GPL-2), compiled only with the InotifyTools trait.
        .systemLibrary(
            name: "CInotifyTools",
            providers: [.apt(["libinotifytools0-dev"])]
        ),
        .target(
            name: "FileSystemEventsInotifyTools",
            dependencies: ["FileSystemEventsCore", "FileSystemEventsInotify", "CInotifyTools", "CFileSystemEventsShims"],
            swiftSettings: strictSettings
        ),

        // App-facing features above the backends (a live directory listing), written against
        // the FileSystemEventSource protocol only, so they run on every backend, third-party
        // ones included.
        .target(
            name: "FileSystemEventsApps",
            dependencies: ["PlatformLibc", "FileSystemEventsCore"],
            swiftSettings: strictSettings
        ),

        // The product host apps import: re-exports the core and picks a backend by name.
        .target(
            name: "FileSystemEvents",
            dependencies: [
                "PlatformLibc",
                "CFileSystemEventsShims",
                "FileSystemEventsCore",
                "FileSystemEventsApps",
                "FileSystemEventsPolling",
                .target(name: "FileSystemEventsInotify", condition: .when(platforms: [.linux])),
                .target(
                    name: "FileSystemEventsInotifyTools",
                    condition: .when(platforms: [.linux], traits: [inotifyToolsTrait])
                ),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strictSettings
        ),

        // `URL` conveniences, apart so that nothing else links Foundation.
        .target(
            name: "FileSystemEventsFoundation",
            dependencies: ["FileSystemEvents"],
            swiftSettings: strictSettings
        ),

        // Scenarios every backend must pass; a library so third-party backends can run them.
        .target(
            name: "FileSystemEventsConformance",
            dependencies: ["PlatformLibc", "FileSystemEventsCore", "CFileSystemEventsShims"],
            swiftSettings: strictSettings
        ),

        // An example of a third-party backend (a polling variant that also compares file
        // contents), in no product. It uses only the public API, as a backend in another package
        // must (scripts/check-example-backend.sh type-checks it from outside the package); the
        // conformance suite and the configuration tests run it like a built-in backend.
        .target(
            name: "DigestPollingBackend",
            dependencies: ["FileSystemEvents", .product(name: "SystemPackage", package: "swift-system")],
            path: "Sources/Examples/DigestPollingBackend",
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "filewatch",
            dependencies: [
                "PlatformLibc",
                "FileSystemEvents",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "FileSystemEventsCoreTests",
            dependencies: ["FileSystemEventsCore", "FileSystemEventsConformance"],
            swiftSettings: strictSettings
        ),
        // The product's own logic: configuration, option checks, stream rules, filters per backend.
        .testTarget(
            name: "FileSystemEventsTests",
            dependencies: ["FileSystemEvents", "FileSystemEventsCore", "FileSystemEventsConformance", "FileSystemEventsFoundation", "DigestPollingBackend",
                           "ConformanceTestSupport"],
            swiftSettings: strictSettings
        ),
        // Runs a conformance scenario as a Swift Testing test case (skips cancel it, failures
        // are issues): for the test targets that run scenarios; and a scripted source, for those
        // that test what consumes a source.
        .target(
            name: "ConformanceTestSupport",
            dependencies: ["FileSystemEventsCore", "FileSystemEventsConformance"],
            path: "Tests/ConformanceTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["FileSystemEvents", "FileSystemEventsCore", "FileSystemEventsConformance", "ConformanceTestSupport", "DigestPollingBackend"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "InotifyBackendTests",
            dependencies: [
                .target(name: "FileSystemEventsInotify", condition: .when(platforms: [.linux])),
                .target(
                    name: "FileSystemEventsInotifyTools",
                    condition: .when(platforms: [.linux], traits: [inotifyToolsTrait])
                ),
                "FileSystemEventsConformance",
                "ConformanceTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DirectoryListingTests",
            dependencies: ["FileSystemEvents", "FileSystemEventsApps", "FileSystemEventsConformance", "ConformanceTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FileFollowerTests",
            dependencies: ["FileSystemEvents", "FileSystemEventsApps", "FileSystemEventsConformance", "ConformanceTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FilewatchCLITests",
            dependencies: ["filewatch", "FileSystemEventsConformance"],
            swiftSettings: strictSettings
        ),
    ]
)

// `swift package generate-documentation` (scripts/generate-docs.sh sets this): the DocC plugin
// only when documentation is being built, so that apps depending on this package never resolve
// or fetch it.
if Context.environment["FILEWATCH_DOCUMENTATION"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
