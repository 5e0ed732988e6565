#!/usr/bin/env bash
# `filewatch follow` next to GNU `tail -F`, on the same files in the same run:
#   1. throughput following a file appended as fast as a C writer can (MiB/s, writer start to
#      the last byte out of the follower);
#   2. append-to-stdout latency, p50 and p99: one line appended at a time, timed from just
#      before its write(2) to its arrival on the follower's stdout (a FIFO the writer reads);
#   3. bytes lost across ROTATIONS rotations by rename (logrotate `create`), the writer adding a
#      line to the renamed file before it reopens, both followers running at once.
#
#   FILEWATCH_BIN=.build/release/filewatch scripts/follow-vs-tail.sh
#
# Environment: FOLLOW_BENCH_MB (1024), FOLLOW_BENCH_ROTATIONS (1000), FOLLOW_BENCH_PAUSE_US
# (microseconds between rotations, 10000), FOLLOW_BENCH_BACKEND (inotify),
# FOLLOW_BENCH_LATENCY_SAMPLES (500), FOLLOW_BENCH_RESULTS (a file to write the figures to as
# JSON, which scripts/peers/compare.py puts into docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${FILEWATCH_BIN:-.build/release/filewatch}
megabytes=${FOLLOW_BENCH_MB:-1024}
rotations=${FOLLOW_BENCH_ROTATIONS:-1000}
pause=${FOLLOW_BENCH_PAUSE_US:-10000}
backend=${FOLLOW_BENCH_BACKEND:-inotify}
samples=${FOLLOW_BENCH_LATENCY_SAMPLES:-500}
[ -x "$bin" ] || { echo "error: no filewatch binary at $bin (build with: swift build -c release)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -o "$work/writer" scripts/peers/follow_writer.c

now() { date +%s%N; }

# name=value pairs for FOLLOW_BENCH_RESULTS, in the order measured.
results=()
record() { results+=("\"$1\": $2"); }

# throughput NAME COMMAND...: the follower's command; the file is appended to the command line.
throughput() {
    local name=$1; shift
    local log="$work/throughput-$name.log" bytes=$((megabytes * 1024 * 1024))
    : > "$log"
    rm -f "$work/pipe"; mkfifo "$work/pipe"
    head -c "$bytes" < "$work/pipe" > /dev/null &
    local reader=$!
    "$@" "$log" > "$work/pipe" 2>/dev/null &
    local follower=$!
    pids+=("$follower")
    sleep 0.5  # let the follower attach (it starts from byte 0 either way, so nothing is missed)
    local start end
    start=$(now)
    "$work/writer" append "$log" "$bytes" 65536 > /dev/null
    wait "$reader"
    end=$(now)
    kill "$follower" 2>/dev/null || true
    wait "$follower" 2>/dev/null || true
    rm -f "$log"
    awk -v b="$bytes" -v ns=$((end - start)) -v n="$name" 'BEGIN { printf "%-18s %8.1f MiB/s  (%d MiB in %.2f s)\n", n, b / 1048576 / (ns / 1e9), b / 1048576, ns / 1e9 }'
    record "throughput_mib_s ($name)" "$(awk -v b="$bytes" -v ns=$((end - start)) 'BEGIN { printf "%.1f", b / 1048576 / (ns / 1e9) }')"
}

echo "== throughput: ${megabytes} MiB appended in 64 KiB writes"
throughput "tail -F" tail -F -c +1
throughput "filewatch follow" "$bin" follow --from-start --backend "$backend"

# latency NAME COMMAND...: the follower's command; the file is appended to the command line.
latency() {
    local name=$1; shift
    local log="$work/latency-$name.log"
    : > "$log"
    rm -f "$work/pipe"; mkfifo "$work/pipe"
    "$@" "$log" > "$work/pipe" 2>/dev/null &
    local follower=$!
    pids+=("$follower")
    local result
    result=$("$work/writer" latency "$log" "$samples" "$work/pipe")
    kill "$follower" 2>/dev/null || true
    wait "$follower" 2>/dev/null || true
    rm -f "$log"
    set -- $result
    printf "%-18s p50 %8.1f µs   p99 %8.1f µs  (%d lines)\n" "$name" "$1" "$2" "$samples"
    record "latency_p50_us ($name)" "$1"
    record "latency_p99_us ($name)" "$2"
}

echo "== latency: $samples lines appended one at a time, write(2) to the follower's stdout"
latency "tail -F" tail -F -c +1
latency "filewatch follow" "$bin" follow --from-start --backend "$backend"

echo "== rotation: $rotations rotations, ${pause} µs apart, both followers at once"
log="$work/rotating.log"
: > "$log"
"$bin" follow "$log" --from-start --backend "$backend" > "$work/filewatch.out" 2>/dev/null &
filewatch=$!; pids+=("$filewatch")
tail -F -c +1 "$log" > "$work/tail.out" 2>/dev/null &
tail_pid=$!; pids+=("$tail_pid")
sleep 0.5
written=$(FOLLOW_WRITER_MIRROR="$work/expected" "$work/writer" rotate "$log" "$rotations" 5 "$pause")
# Both have seen the last line, or 10 s have passed.
for _ in $(seq 100); do
    if tail -n 1 "$work/filewatch.out" | grep -qx done && tail -n 1 "$work/tail.out" | grep -qx done; then break; fi
    sleep 0.1
done
kill -INT "$filewatch" 2>/dev/null || true; wait "$filewatch" 2>/dev/null || true
kill "$tail_pid" 2>/dev/null || true; wait "$tail_pid" 2>/dev/null || true
for name in tail filewatch; do
    out="$work/$name.out"
    got=$(stat -c %s "$out")
    if cmp -s "$out" "$work/expected"; then same="identical to what was written"; else same="differs from what was written"; fi
    printf "%-18s %10d of %d bytes, lost %d; output %s\n" "$name" "$got" "$written" $((written - got)) "$same"
    label="filewatch follow"; [ "$name" = tail ] && label="tail -F"
    record "rotation_bytes_lost ($label)" $((written - got))
done
record "rotation_bytes_written" "$written"

if [ -n "${FOLLOW_BENCH_RESULTS:-}" ]; then
    {
        printf '{"date": "%s", "binary": "%s", "megabytes": %d, "latency_samples": %d, "rotations": %d, "pause_us": %d, "backend": "%s"' \
            "$(date -u +%Y-%m-%d)" "$bin" "$megabytes" "$samples" "$rotations" "$pause" "$backend"
        for pair in "${results[@]}"; do printf ', %s' "$pair"; done
        printf '}\n'
    } > "$FOLLOW_BENCH_RESULTS"
fi
