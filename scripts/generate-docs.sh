#!/usr/bin/env bash
# Builds the DocC reference of FileSystemEvents (the catalog in
# Sources/FileSystemEvents/FileSystemEvents.docc plus every public symbol of the modules it
# re-exports) with the toolchain's own `docc`, so the package adds no documentation plugin to
# the dependency graph of the apps that use it.
#
#   scripts/generate-docs.sh [OUTPUT]      # default: .build/documentation/FileSystemEvents.doccarchive
#
# Serve or inspect the archive with any static web server (`docc preview` does both).
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build/documentation/FileSystemEvents.doccarchive}"
graphs=.build/symbol-graphs
mkdir -p "$graphs" "$(dirname "$output")"

# FileSystemEvents re-exports the other modules, and its symbol graph carries their public
# symbols too, so one module's graph documents the whole API with links that resolve. The
# compiler writes a module's graph only when it compiles that module: touching the module makes
# sure its graph is fresh.
touch Sources/FileSystemEvents/Exports.swift
swift build --target FileSystemEvents \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public

kept=.build/symbol-graphs-kept
rm -rf "$kept" && mkdir -p "$kept"
cp "$graphs"/FileSystemEvents.symbols.json "$kept/"
cp "$graphs"/FileSystemEvents@*.symbols.json "$kept/" 2>/dev/null || true

docc convert Sources/FileSystemEvents/FileSystemEvents.docc \
    --additional-symbol-graph-dir "$kept" \
    --fallback-display-name FileSystemEvents --fallback-bundle-identifier org.filewatch.FileSystemEvents \
    --output-path "$output"
echo "==> $output"
