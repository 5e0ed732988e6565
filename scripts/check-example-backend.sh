#!/usr/bin/env bash
# Type-checks the example third-party backend (Sources/Examples/DigestPollingBackend) the way
# another package would compile it: under a package name of its own, so that anything it used
# from this package's `package`-level API would fail here, although the package's own build of
# the target sees it. Run after a debug build; scripts/test.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build --show-bin-path "$@")"
module_maps=()
for map in "$bin/CFileSystemEventsShims.build/module.modulemap" \
           .build/checkouts/swift-system/Sources/CSystem/include/module.modulemap \
           Sources/CInotifyTools/module.modulemap; do
    module_maps+=(-Xcc "-fmodule-map-file=$map")
done
swiftc -typecheck -swift-version 6 -package-name filewatch_example_outside \
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault \
    -I "$bin/Modules" "${module_maps[@]}" \
    Sources/Examples/DigestPollingBackend/*.swift
echo "==> the example backend uses only the public API"
