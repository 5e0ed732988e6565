#!/usr/bin/env python3
"""Resident memory of two or more builds of the CLI watching the same tree, run in turn.

    scripts/peers/rss-side-by-side.py [--backend polling] [--runs 5] DIRECTORIES FILES BINARY...

Builds a tree of DIRECTORIES directories of FILES empty files each (ten subdirectories per
directory, as scripts/peers/compare.py builds its trees) under /var/tmp, then for each run
starts every BINARY in turn with `watch TREE --format json --backend BACKEND`, the page cache
dropped before each (root), and records VmRSS right after `ready` and the peak of VmRSS and of
RssAnon over max(2 s, 3 × the time to ready): for a polling watch about three scans, whose peak
is what it costs. Prints each run and the medians.

What it is for: a change to memory of a few hundred KiB is smaller than the page cache's noise
between compare.py's runs; builds side by side, in turn, with the cache dropped, show it.
"""
import argparse
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

from trees import make_tree


def memory(pid):
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                values[key] = int(value.split()[0])
    return values


def drop_page_cache():
    subprocess.run(["sync"], check=False)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as control:
            control.write("3\n")
    except OSError:
        pass  # not root: the runs still alternate, with the cache as it is


def measure(binary, root, backend):
    drop_page_cache()
    started = time.monotonic()
    process = subprocess.Popen([binary, "watch", root, "--format", "json", "--backend", backend,
                                "--poll-interval", "0.01"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{binary} ended before ready")
        if b'"kind":"ready"' in line:
            break
    ready = time.monotonic() - started
    threading.Thread(target=lambda: [None for _ in iter(lambda: process.stdout.read1(65536), b"")],
                     daemon=True).start()
    after = memory(process.pid)
    peak = dict(after)
    deadline = time.monotonic() + max(2.0, 3 * ready)
    while time.monotonic() < deadline:
        time.sleep(0.05)
        for key, value in memory(process.pid).items():
            peak[key] = max(peak[key], value)
    process.terminate()
    process.wait(10)
    return {"ready": ready, "after": after["VmRSS"], "peak": peak["VmRSS"], "anon_peak": peak["RssAnon"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="polling")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("directories", type=int)
    parser.add_argument("files", type=int)
    parser.add_argument("binaries", nargs="+")
    arguments = parser.parse_args()
    root = tempfile.mkdtemp(dir="/var/tmp", prefix="filewatch-rss-")
    try:
        make_tree(root, arguments.directories, arguments.files)
        results = {binary: [] for binary in arguments.binaries}
        for run in range(arguments.runs):
            for binary in arguments.binaries:
                sample = measure(binary, root, arguments.backend)
                results[binary].append(sample)
                print(f"run {run + 1} {binary}: ready {sample['ready']:.2f} s, after ready {sample['after'] / 1024:.2f} MiB, "
                      f"peak {sample['peak'] / 1024:.2f} MiB ({sample['anon_peak'] / 1024:.2f} anonymous)", flush=True)
        for binary, samples in results.items():
            median = {key: statistics.median(sample[key] for sample in samples) for key in samples[0]}
            print(f"median of {arguments.runs}, {binary}: after ready {median['after'] / 1024:.2f} MiB, "
                  f"peak {median['peak'] / 1024:.2f} MiB ({median['anon_peak'] / 1024:.2f} anonymous)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
