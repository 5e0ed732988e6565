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

bundle=$(swift build --show-bin-path "${traits[@]}")/filewatchPackageTests.xctest

# A failure in one part does not stop the others; the script fails at the end.
status=0

# Scenarios where privilege matters (unreadable directories, permissions, the random mixes and
# the back-pressure races; ConformanceScenario.runsUnprivileged) run a second time as an
# unprivileged user: as root, no directory is unreadable (CAP_DAC_READ_SEARCH) and the inotify
# limits are root's. A rerun that cannot happen says so, loudly.
unprivileged_rerun_skipped() {
    echo "==> SKIPPED: the unprivileged rerun of the conformance scenarios flagged runsUnprivileged: $1" >&2
}
if [ "$#" != 0 ]; then
    echo "==> swift test $*"
    swift test --skip-build --no-parallel "${traits[@]}" "$@" || status=$?
    unprivileged_rerun_skipped "a test filter was given ($*); run scripts/test.sh without arguments for it"
    exit "$status"
fi

#   unprivileged_rerun FILTER [--listing]: the conformance tests FILTER selects, as nobody
#   (and, with --listing, DirectoryListingTests' start errors too).
unprivileged_rerun() {
    if [ "$(id -u)" != 0 ]; then
        unprivileged_rerun_skipped "not running as root, so the run above already was unprivileged (uid $(id -u))"
        return 0
    fi
    if ! command -v setpriv >/dev/null; then
        unprivileged_rerun_skipped "setpriv (util-linux) is not installed, so this script cannot drop to user nobody"
        return 0
    fi
    local rc=0 scratch
    echo "==> conformance scenarios flagged runsUnprivileged, as user nobody: $1"
    scratch=$(mktemp -d)
    chmod 1777 "$scratch"
    TMPDIR="$scratch" FILEWATCH_CONFORMANCE_ONLY=unprivileged HOME="$scratch" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$bundle" --testing-library swift-testing --no-parallel --filter "$1" || rc=$?
    if [ "${2:-}" = --listing ]; then
        echo "==> directory listing and snapshot: unreadable and unsearchable directories, as user nobody"
        TMPDIR="$scratch" HOME="$scratch" \
            setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
            "$bundle" --testing-library swift-testing --no-parallel --filter "DirectoryListingTests/(startErrors|unsearchableDirectory)|SnapshotCLITests/unreadableDirectory|ListCommandTests/unreadableSubdirectory|SnapshotScannerDirectoryExaminationTests" || rc=$?
    fi
    rm -rf "$scratch"
    return "$rc"
}

# Two parts side by side, one per core: each is serialized within itself (the conformance
# suite counts its process's open descriptors and floods kernel queues, and neither crosses a
# process), and together they keep both cores busy, where one serial run (`swift test
# --no-parallel`, 832 s) left one idle most of the time. Part 1: the whole conformance suite
# on the built-in backends and the example one, then the unprivileged rerun of the built-in
# ones. Part 2: the suite through the layers above a backend (handler delivery, shared-watcher
# subscriptions) and every other test, then the example backend's unprivileged rerun, which
# balances the two. Each line is prefixed with its part; the summaries are printed again at
# the end.
backends='ConformanceTests/(polling|inotify|inotifytools|exampleThirdPartyBackend)\('
logs=$(mktemp -d)
part() {
    local name=$1
    shift
    { local rc=0; "$@" 2>&1 || rc=$?; echo "$rc" > "$logs/$name.rc"; } | tee "$logs/$name.log" | sed -u "s/^/[$name] /"
}
run_part_1() {
    local rc=0
    "$bundle" --testing-library swift-testing --no-parallel --filter "$backends" || rc=$?
    unprivileged_rerun 'ConformanceTests/(polling|inotify|inotifytools)\(' --listing || rc=$?
    return "$rc"
}
run_part_2() {
    local rc=0
    "$bundle" --testing-library swift-testing --no-parallel --skip "$backends" || rc=$?
    unprivileged_rerun 'ConformanceTests/exampleThirdPartyBackend\(' || rc=$?
    return "$rc"
}
#   summary_lines LOG: the lines a reader of a failed run needs at the end, where a CI log is
#   cut: each run's total, and each failure with the message Swift Testing prints below it
#   (the lines after a ✘ up to the next event line, at most 60), which names a conformance
#   scenario's seed and operations.
summary_lines() {
    awk '{ line = $0; gsub(/\033\[[0-9;]*m/, "", line) }
         line ~ /Test run with/ { print; issue = 0; next }
         line ~ /✘/ { print; issue = 60; next }
         line ~ /^(◇|✔|⚠|➜|􀟈)/ { issue = 0; next }
         issue > 0 { print; issue--; next }' "$1"
}
echo "==> the tests, in two parts side by side (1: conformance on every backend; 2: the layers and everything else)"
part 1 run_part_1 &
first=$!
part 2 run_part_2 &
second=$!
wait "$first" "$second" || true
for name in 1 2; do
    rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
    echo "==> part $name: exit status $rc; its summary lines (with each recorded issue's message):"
    summary_lines "$logs/$name.log"
    [ "$rc" = 0 ] || status=1
done
rm -rf "$logs"
exit "$status"
