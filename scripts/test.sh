#!/usr/bin/env bash
# Runs every test: unit tests, the conformance suite for every backend built here, and the
# CLI end-to-end tests. Installs what the tests need first (scripts/install-test-dependencies.sh).
#
#   scripts/test.sh            # everything
#   scripts/test.sh --filter X # only tests matching X (passed to swift test)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-test-dependencies.sh

traits=()
if scripts/install-test-dependencies.sh --has-inotifytools; then
    traits=(--traits InotifyTools)
fi

echo "==> swift build (${traits[*]:-default traits})"
swift build --build-tests "${traits[@]}" 2>&1 | tee .build-test-log.txt
if grep -E "^/.*(Sources|Tests)/.*warning:" .build-test-log.txt | grep -v "/.build/checkouts/"; then
    echo "error: the build has warnings (see above); the project builds warning-free" >&2
    rm -f .build-test-log.txt
    exit 1
fi
rm -f .build-test-log.txt

# Serialized: the conformance suite counts open descriptors and floods kernel queues.
echo "==> swift test"
swift test --skip-build --no-parallel "${traits[@]}" "$@"

# As root, no directory is unreadable (CAP_DAC_READ_SEARCH), so the conformance scenario for
# unreadable directories runs again as an unprivileged user.
if [ "$(id -u)" = 0 ] && [ "$#" = 0 ] && command -v setpriv >/dev/null; then
    echo "==> conformance scenario 26 (unreadable directories) as user nobody"
    bundle=$(swift build --show-bin-path "${traits[@]}")/filewatchPackageTests.xctest
    scratch=$(mktemp -d)
    chmod 1777 "$scratch"
    TMPDIR="$scratch" FILEWATCH_CONFORMANCE_ONLY=26 HOME="$scratch" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$bundle" --testing-library swift-testing --filter ConformanceTests
    echo "==> directory listing start errors (an unreadable directory) as user nobody"
    TMPDIR="$scratch" HOME="$scratch" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$bundle" --testing-library swift-testing --filter "DirectoryListingTests/startErrors"
    rm -rf "$scratch"
fi
