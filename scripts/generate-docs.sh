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
rm -rf "$graphs" && mkdir -p "$graphs" "$(dirname "$output")"

swift build --target FileSystemEvents \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public

# One catalog for the modules a host imports through FileSystemEvents.
keep=(FileSystemEvents FileSystemEventsCore FileSystemEventsApps FileSystemEventsPolling FileSystemEventsInotify)
filtered=.build/symbol-graphs-kept
rm -rf "$filtered" && mkdir -p "$filtered"
for module in "${keep[@]}"; do
    cp "$graphs/$module".symbols.json "$filtered/" 2>/dev/null || true
    cp "$graphs/$module"@*.symbols.json "$filtered/" 2>/dev/null || true
done

docc convert Sources/FileSystemEvents/FileSystemEvents.docc \
    --additional-symbol-graph-dir "$filtered" \
    --fallback-display-name FileSystemEvents --fallback-bundle-identifier org.filewatch.FileSystemEvents \
    --output-path "$output"
echo "==> $output"
