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

echo "==> the example third-party backend, type-checked from outside the package"
scripts/check-example-backend.sh "${traits[@]}"

# Serialized: the conformance suite counts open descriptors and floods kernel queues.
echo "==> swift test"
# A failure here does not stop the unprivileged rerun below; the script fails at the end.
status=0
swift test --skip-build --no-parallel "${traits[@]}" "$@" || status=$?

# Scenarios where privilege matters (unreadable directories, permissions, the random mixes and
# the back-pressure races; ConformanceScenario.runsUnprivileged) run a second time as an
# unprivileged user: as root, no directory is unreadable (CAP_DAC_READ_SEARCH) and the inotify
# limits are root's. A rerun that cannot happen says so, loudly.
unprivileged_rerun_skipped() {
    echo "==> SKIPPED: the unprivileged rerun of the conformance scenarios flagged runsUnprivileged: $1" >&2
}
if [ "$#" != 0 ]; then
    unprivileged_rerun_skipped "a test filter was given ($*); run scripts/test.sh without arguments for it"
elif [ "$(id -u)" != 0 ]; then
    unprivileged_rerun_skipped "not running as root, so the run above already was unprivileged (uid $(id -u))"
elif ! command -v setpriv >/dev/null; then
    unprivileged_rerun_skipped "setpriv (util-linux) is not installed, so this script cannot drop to user nobody"
else
    echo "==> conformance scenarios flagged runsUnprivileged, as user nobody"
    bundle=$(swift build --show-bin-path "${traits[@]}")/filewatchPackageTests.xctest
    scratch=$(mktemp -d)
    chmod 1777 "$scratch"
    TMPDIR="$scratch" FILEWATCH_CONFORMANCE_ONLY=unprivileged HOME="$scratch" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$bundle" --testing-library swift-testing --filter ConformanceTests || status=$?
    echo "==> directory listing start errors (an unreadable directory) as user nobody"
    TMPDIR="$scratch" HOME="$scratch" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$bundle" --testing-library swift-testing --filter "DirectoryListingTests/startErrors" || status=$?
    rm -rf "$scratch"
fi
exit "$status"
