#!/usr/bin/env bash
# Records which functions the filewatch CLI runs in everyday use, into
# scripts/cli-symbol-order.txt, the order in which scripts/build-cli.sh has the linker lay
# them out.
#
# Why: a process's resident memory counts every page of its binary that is mapped, and the
# kernel maps a page's neighbours with it (fault-around, 64 KiB), so code that runs scattered
# across 11 MB of text made 9.4 MiB of it resident on an empty directory; laid out in this
# order, 4 MiB. Most of that is the standard library's own code, which comes as one section
# the linker cannot reorder. Names that no longer exist (the code changed since the
# recording) are skipped by the linker; the layout then degrades slowly rather than breaks,
# and rerunning this script brings it back.
#
#   scripts/record-cli-symbol-order.sh   # needs valgrind (Debian's package; installed as root)
#
# Each workload runs the deployment build under callgrind, which sees every function that
# runs, on every thread, where a sampling profiler would miss the rare ones: a watch of an
# empty directory that only starts and stops, then inotify watches with JSON and text output
# (and `--settle`) over a tree being changed, `list --live`, `follow` across rotation, the
# other backends' watches, `backends`, `snapshot` and `changes`. Functions are written in the
# order the workloads ran, each adding those it ran that are not written yet, so that what
# every watch runs is packed together rather than spread among what only other commands need.
#
# To compare two layouts, measure both binaries with the page cache in the same state (`sync;
# echo 3 > /proc/sys/vm/drop_caches`, then runs interleaved): the kernel maps only the neighbours
# that are cached, so a binary just copied or built (every page cached) shows up to 1 MiB more
# resident than the same bytes in a file whose untouched pages were evicted. Compared that way,
# the recording of 2026-11-28 took an empty directory's watch from 8,492 to 8,224 KiB.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
    else
        echo "error: valgrind is needed (apt-get install valgrind)" >&2
        exit 1
    fi
fi

binary=$(scripts/build-cli.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# callgrind reads symbols from .symtab; the DWARF of a release build only slows it down.
strip --strip-debug -o "$work/filewatch" "$binary"

# Runs `filewatch ARGS...` under callgrind until its output says it is ready, then the shell
# function named by $workload, then stops it the way a user does (SIGINT). The profiles are
# read in the order they were taken ($order): the first one's functions are laid out first.
order=()
profile() {
    local name=$1; shift
    local out="$work/$name.out"
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.callgrind" \
        "$work/filewatch" "$@" >"$out" 2>"$work/$name.err" &
    local pid=$!
    for _ in $(seq 1 600); do
        [ -s "$out" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    "$workload"
    # callgrind runs the program some 50 times slower: give the last events time to print.
    sleep 3
    kill -INT "$pid" 2>/dev/null || true
    wait "$pid" || true
    [ -s "$work/$name.callgrind" ] || { echo "error: no profile from $name:" >&2; cat "$work/$name.err" >&2; exit 1; }
    order+=("$name")
}

tree=$work/tree
changes() {
    for index in 1 2 3; do
        echo "line" >>"$tree/a/f$index"
        mkdir -p "$tree/n$index/m/k" && echo x >"$tree/n$index/m/k/file"
        mv "$tree/n$index" "$tree/r$index"
        echo y >"$tree/r$index/tmp" && mv "$tree/r$index/tmp" "$tree/r$index/saved"
        chmod 600 "$tree/a/f$index"
        ln -s "a/f$index" "$tree/link$index"
        rm -r "$tree/r$index" "$tree/link$index"
    done
    for index in $(seq 1 200); do : >"$tree/a/burst$index"; done
    rm -f "$tree"/a/burst*
}
no_changes() { sleep 1; }
follow_changes() {
    for index in $(seq 1 50); do echo "line $index" >>"$work/log"; done
    mv "$work/log" "$work/log.1" && echo "after rotation" >"$work/log"
    truncate -s 0 "$work/log" && echo "after truncation" >>"$work/log"
}

mkdir -p "$tree/a/b"
for index in 1 2 3; do echo x >"$tree/a/f$index"; done
other_backends=(polling)
"$work/filewatch" backends 2>/dev/null | grep -q "^inotifytools.*available" && other_backends+=(inotifytools)
# Start-up, `ready` and a clean stop on an empty directory: what every watch runs, first.
mkdir -p "$work/empty"
workload=no_changes
profile watch-idle watch --backend inotify --format json "$work/empty"
workload=changes
profile watch-inotify-json watch --backend inotify --poll-interval 0.2 --format json "$tree"
profile watch-inotify-text watch --backend inotify --poll-interval 0.2 "$tree"
profile watch-settle watch --backend inotify --settle 0.2 --format json "$tree"
profile list-live list --live --backend inotify "$tree/a"
echo first >"$work/log"
workload=follow_changes
profile follow follow --from-start --backend inotify "$work/log"
workload=changes
for backend in "${other_backends[@]}"; do
    profile "watch-$backend-json" watch --backend "$backend" --poll-interval 0.2 --format json "$tree"
    profile "watch-$backend-text" watch --backend "$backend" --poll-interval 0.2 "$tree"
done
workload=no_changes
profile backends backends
profile snapshot snapshot "$tree" --output "$work/tree.snapshot"
echo changed >>"$tree/a/f1"
profile changes changes "$tree" --since "$work/tree.snapshot"

# callgrind names each function once per file as "fn=(id) name"; later mentions are "(id)".
# The workloads in the order they ran: what a watch runs comes first and together, then what
# each further command adds.
python3 - "${order[@]/#/$work/}" >scripts/cli-symbol-order.txt <<'EOF'
import re, sys
written = set()
for path in sys.argv[1:]:
    names = []
    with open(path + ".callgrind", errors="replace") as profile:
        for line in profile:
            match = re.match(r"c?fn=\(\d+\) (\S+)", line)
            if match and match.group(1) not in written:
                written.add(match.group(1))
                names.append(match.group(1))
    # Within one workload, by name: a module's functions, and a type's, side by side.
    for name in sorted(names):
        print(name)
EOF
echo "wrote scripts/cli-symbol-order.txt: $(wc -l <scripts/cli-symbol-order.txt) functions from $(ls "$work"/*.callgrind | wc -l) workloads" >&2
