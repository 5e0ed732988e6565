#!/usr/bin/env bash
# Side by side with the tools people use today: installs inotify-tools and fswatch (Debian)
# and watchdog (PyPI, into a virtual environment of this script's own), builds filewatch and
# the kernel-floor program, runs scripts/peers/compare.py, and regenerates docs/benchmarks.md
# and its plots. Optionally includes the benchmark package's output (BENCHMARK_PACKAGE=1).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq inotify-tools fswatch >/dev/null 2>&1 \
        || echo "warning: could not install inotify-tools/fswatch; they are left out" >&2
fi
venv=scripts/.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q watchdog matplotlib

scripts/install-test-dependencies.sh
# The deployment build (README: "Building the CLI for deployment"): the Swift runtime linked
# in, laid out by scripts/cli-symbol-order.txt; with the InotifyTools trait where the library is.
bin=$(dirname "$(scripts/build-cli.sh | tail -1)")
work=$(mktemp -d)
gcc -O2 -pthread scripts/peers/floor.c -o "$work/floor"

if [ "${BENCHMARK_PACKAGE:-0}" = 1 ]; then
    # Runs the benchmark package once: its tables go into docs/benchmarks.md, and the same
    # results become the stored baseline 'main' (Benchmarks/.benchmarkBaselines) that
    # `swift package benchmark baseline check main` compares later runs against.
    # `baseline update` stores without printing; `baseline read` prints the stored tables, which
    # compare.py turns into docs/benchmarks.md's tables. The trees it measures (up to 1M entries)
    # stay in $TMPDIR/filewatch-benchmark-trees, where compare.py measures the floors on them.
    (cd Benchmarks && swift package --disable-sandbox --allow-writing-to-package-directory benchmark \
        baseline update main --no-progress --filter "${BENCHMARK_FILTER:-.*}" \
        && swift package --disable-sandbox benchmark baseline read main --no-progress) > docs/benchmark-package-output.txt 2>&1
fi

command="scripts/compare-peers.sh"
for name in BENCHMARK_PACKAGE BENCHMARK_FILTER LATENCY_SAMPLES LATENCY_ROUNDS READY_RUNS FIDELITY_SEEDS BURST_RUNS BURST_FILES MEMORY_1M FILEWATCH_BENCHMARK_SKIP_LARGE; do
    if [ -n "${!name:-}" ]; then command="$name=${!name} $command"; fi
done
# Following a file next to GNU tail -F (throughput, latency, rotation loss): its figures go into
# docs/benchmarks.md too.
FILEWATCH_BIN="$bin/filewatch" FOLLOW_BENCH_RESULTS=docs/follow-vs-tail-results.json scripts/follow-vs-tail.sh \
    || echo "warning: scripts/follow-vs-tail.sh failed; the follow figures are an earlier run's" >&2
COMPARE_COMMAND="$command" FLOOR_BIN="$work/floor" FILEWATCH_BIN="$bin/filewatch" VENV_PYTHON="$venv/bin/python" \
    "$venv/bin/python" scripts/peers/compare.py
rm -rf "$work"
echo "wrote docs/benchmarks.md"
scripts/compare-settle.sh || echo "warning: scripts/compare-settle.sh failed; docs/settling-comparison.md was not regenerated" >&2
