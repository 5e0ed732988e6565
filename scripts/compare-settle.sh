#!/usr/bin/env bash
# Settling side by side: when does each tool say a file has finished being written? Installs
# chokidar (node-chokidar) and watchman from Debian when root (a peer that cannot be installed is
# left out with a warning), builds filewatch in release, runs scripts/peers/settle_compare.py
# (plain Python 3) on three workloads (a writer that pauses with the file open, a 200 MiB cp, a
# tar -x of 1,000 files) with the same quiet period for every tool, and regenerates
# docs/settling-comparison.md. About 4 minutes; watchman runs as a server of its own (socket,
# state and log under the run's temporary directory) and is shut down at the end.
#
#   scripts/compare-settle.sh
#   SETTLE_QUIET=2 SETTLE_TOOLS=filewatch,chokidar scripts/compare-settle.sh   # Q in seconds; a subset of tools
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >/dev/null 2>&1 || true
    for package in node-chokidar watchman; do
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1 \
            || echo "warning: could not install $package; it is left out" >&2
    done
fi
command -v node >/dev/null || echo "warning: node is not installed; chokidar is left out" >&2

# The machine has 2 cores and other builds may run: every build goes through the same lock.
# The deployment build, as scripts/compare-peers.sh measures it.
bin=$(dirname "$(flock /tmp/filewatch-build.lock scripts/build-cli.sh | tail -1)")

command="scripts/compare-settle.sh"
for name in SETTLE_QUIET SETTLE_TOOLS; do
    if [ -n "${!name:-}" ]; then command="$name=${!name} $command"; fi
done
COMPARE_COMMAND="$command" FILEWATCH_BIN="$bin/filewatch" NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}" \
    python3 -B scripts/peers/settle_compare.py
