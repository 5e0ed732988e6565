// swift-tools-version: 6.1
import PackageDescription

import class Foundation.FileManager

// A package of its own (as swift-nio and swift-log do), so host apps never resolve the
// benchmark dependencies. The libinotifytools backend is measured when its C library is
// installed (scripts/install-test-dependencies.sh installs it).
let hasInotifyTools = FileManager.default.fileExists(atPath: "/usr/include/inotifytools/inotifytools.h")

let package = Package(
    name: "FileSystemEventsBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "filewatch", path: "..", traits: hasInotifyTools ? ["InotifyTools"] : []),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The C floors a benchmark of ours divides by, run in the same process and run.
        .target(name: "KernelFloors", path: "KernelFloors"),
        .executableTarget(
            name: "FileSystemEventsBenchmarks",
            dependencies: [
                .product(name: "FileSystemEvents", package: "filewatch"),
                .product(name: "Benchmark", package: "benchmark"),
                "KernelFloors",
            ],
            path: "Benchmarks/FileSystemEventsBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ]
)
