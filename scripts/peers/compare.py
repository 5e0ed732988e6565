#!/usr/bin/env python3
"""Side-by-side comparison of filewatch with the watchers people use today.

Runs, in one run on the same trees: filewatch (each backend), inotifywait (inotify-tools),
fswatch (inotify and poll monitors) and Python's watchdog (inotify and polling observers),
next to a C program that measures the kernel floors. Reports medians over repeated runs and
ratios to the floor, and replays each watcher's output after seeded bursts to check whether
it reproduces the tree on disk (the replay invariant). Writes docs/benchmarks.md and plots.

Invoked by scripts/compare-peers.sh, which installs the peers first.
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from trees import make_tree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = tempfile.mkdtemp(prefix="filewatch-compare-")
FLOOR = os.environ["FLOOR_BIN"]
FILEWATCH = os.environ["FILEWATCH_BIN"]
PYTHON = os.environ.get("VENV_PYTHON", sys.executable)
LATENCY_SAMPLES = int(os.environ.get("LATENCY_SAMPLES", "200"))
LATENCY_ROUNDS = int(os.environ.get("LATENCY_ROUNDS", "10"))
READY_RUNS = int(os.environ.get("READY_RUNS", "5"))
SEEDS = int(os.environ.get("FIDELITY_SEEDS", "5"))
# Where the benchmark package keeps its trees (Benchmarks/.../BenchmarkTree.swift), by label.
BENCHMARK_TREE_BASE = os.environ.get("FILEWATCH_BENCHMARK_TREES",
                                     os.path.join(tempfile.gettempdir(), "filewatch-benchmark-trees"))
BENCHMARK_TREES = {"1k entries": "tree-90x10", "10k entries": "tree-909x10", "100k entries": "tree-9090x10",
                   "1M entries": "tree-90909x10", "10k dirs x 10 files": "tree-10000x10"}
TREE_ENTRIES = {"1k entries": 1_000, "10k entries": 10_000, "100k entries": 100_000, "1M entries": 1_000_000,
                "10k dirs x 10 files": 110_000}
TREE_DIRECTORIES = {"1k entries": 90, "10k entries": 909, "100k entries": 9_090, "1M entries": 90_909,
                    "10k dirs x 10 files": 10_000}


class Watcher:
    """One watcher process; each output line is kept with the time it was read."""

    def __init__(self, name, command, ready_marker=None, ready_on_stderr=False, parse=None):
        self.name, self.command, self.ready_marker = name, command, ready_marker
        self.ready_on_stderr, self.parse = ready_on_stderr, parse
        self.lines, self.lock, self.ready = [], threading.Lock(), threading.Event()
        self.changed = threading.Condition(self.lock)

    def fresh(self):
        """A new, unstarted watcher with the same command (each run needs its own process)."""
        return Watcher(self.name, list(self.command), self.ready_marker, self.ready_on_stderr, self.parse)

    def start(self, root):
        self.root = root
        self.started = time.monotonic()
        self.process = subprocess.Popen([a.replace("{root}", root) for a in self.command],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        threading.Thread(target=self._read, args=(self.process.stdout, False), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, True), daemon=True).start()
        if self.ready_marker is None:
            self._probe_ready(root)
        if not self.ready.wait(120):
            raise RuntimeError(f"{self.name} never became ready")
        self.ready_after = self.ready_time - self.started

    def _read(self, stream, is_stderr):
        for raw in iter(stream.readline, b""):
            now = time.monotonic()
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if self.ready_marker and not self.ready.is_set() and self.ready_marker in line and is_stderr == self.ready_on_stderr:
                self.ready_time = now
                self.ready.set()
                continue
            if is_stderr:
                continue
            with self.lock:
                self.lines.append((now, line))
                self.changed.notify_all()

    def _probe_ready(self, root):
        # No ready signal (fswatch): write probe files until one is reported.
        for attempt in range(600):
            probe = os.path.join(root, f".probe-{attempt}")
            open(probe, "w").close()
            if self.wait_for(lambda line: ".probe-" in line, timeout=0.2):
                self.ready_time = time.monotonic()
                self.ready.set()
                return

    def wait_for(self, predicate, start=0, timeout=30.0):
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for index in range(start, len(self.lines)):
                    if predicate(self.lines[index][1]):
                        return self.lines[index][0]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.changed.wait(remaining)

    def count(self):
        with self.lock:
            return len(self.lines)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def filewatch(backend, poll="0.01"):
    return Watcher(f"filewatch {backend}",
                   [FILEWATCH, "watch", "{root}", "--format", "json", "--backend", backend, "--poll-interval", poll],
                   ready_marker='"kind":"ready"', parse=parse_filewatch)


C_WATCHER = "C inotify watcher"


def c_watcher():
    """floor.c's minimal recursive inotify watcher: the floor for latency, burst and memory
    through the same pipe (it keeps a path per watch and nothing else, so no fidelity)."""
    return Watcher(C_WATCHER, [FLOOR, "watch", "{root}"], ready_marker="READY", ready_on_stderr=True, parse=None)


WATCHDOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "watchdog_watch.py")


def available_backends():
    """The backends this filewatch build offers, from `filewatch backends` (name, then status)."""
    output = subprocess.run([FILEWATCH, "backends"], capture_output=True, text=True, check=True).stdout
    return {fields[0] for fields in (line.split() for line in output.splitlines()) if len(fields) > 1 and fields[1] == "available"}


def peers():
    found = [filewatch(backend) for backend in ["inotify", "polling", "inotifytools"] if backend in available_backends()]
    if shutil.which("inotifywait"):
        # Without -q: inotifywait's "Watches established" on stderr is its ready signal.
        found.append(Watcher("inotifywait", ["inotifywait", "-m", "-r", "--format", "%e|%c|%w%f",
                                             "-e", "create,delete,moved_from,moved_to,modify,attrib", "{root}"],
                             ready_marker="Watches established", ready_on_stderr=True, parse=parse_inotifywait))
    if shutil.which("fswatch"):
        for monitor in ["inotify_monitor", "poll_monitor"]:
            found.append(Watcher(f"fswatch {monitor}", ["fswatch", "-r", "-x", "-m", monitor, "--event-flag-separator=,",
                                                        "-l", "0.1", "{root}"], parse=parse_fswatch))
    found.append(c_watcher())
    for observer in ["inotify", "polling"]:
        found.append(Watcher(f"watchdog {observer}", [PYTHON, WATCHDOG, observer, "{root}"], ready_marker="READY",
                             parse=parse_watchdog))
    return found


# MARK: Output parsers -> list of (kind, path, previous)

def parse_filewatch(lines):
    events = []
    for _, line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("kind") in ("ready", None):
            continue
        events.append((record["kind"], record["path"], record.get("previousPath"), record.get("type")))
    return events


def parse_inotifywait(lines):
    events, pending = [], {}
    for _, line in lines:
        parts = line.split("|", 2)
        if len(parts) != 3:
            continue
        flags, cookie, path = parts[0].split(","), parts[1], parts[2]
        is_dir = "ISDIR" in flags
        if "CREATE" in flags:
            events.append(("created", path, None, "directory" if is_dir else "file"))
        elif "DELETE" in flags:
            events.append(("removed", path, None, None))
        elif "MOVED_FROM" in flags:
            pending[cookie] = path
            events.append(("moved_from", path, cookie, None))
        elif "MOVED_TO" in flags:
            source = pending.pop(cookie, None)
            if source is not None:
                events = [e for e in events if not (e[0] == "moved_from" and e[2] == cookie)]
                events.append(("renamed", path, source, None))
            else:
                events.append(("created", path, None, "directory" if is_dir else "file"))
    return [("removed", e[1], None, None) if e[0] == "moved_from" else e for e in events]


def parse_fswatch(lines):
    events = []
    for _, line in lines:
        path, _, flags = line.rpartition(" ")
        flags = flags.split(",")
        if ".probe-" in path:
            continue
        if "Renamed" in flags:
            events.append(("toggle", path, None, "directory" if "IsDir" in flags else "file"))
        elif "Removed" in flags:
            events.append(("removed", path, None, None))
        elif "Created" in flags:
            events.append(("created", path, None, "directory" if "IsDir" in flags else "file"))
    return events


def parse_watchdog(lines):
    events = []
    for _, line in lines:
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        kind, is_dir, path = parts[0], parts[1] == "1", parts[2]
        if kind == "created":
            events.append(("created", path, None, "directory" if is_dir else "file"))
        elif kind == "deleted":
            events.append(("removed", path, None, None))
        elif kind == "moved" and len(parts) == 4:
            events.append(("renamed", parts[3], path, None))
    return events


def replay(initial, events, root):
    """Applies events to a set of paths, the way a consumer would."""
    tree = set(initial)
    for kind, path, previous, _ in events:
        if not path.startswith(root + "/"):
            continue
        relative = path[len(root) + 1:]
        if kind == "created":
            tree.add(relative)
        elif kind == "removed":
            tree = {p for p in tree if p != relative and not p.startswith(relative + "/")}
        elif kind == "renamed" and previous and previous.startswith(root + "/"):
            old = previous[len(root) + 1:]
            moved = {p for p in tree if p == old or p.startswith(old + "/")}
            tree -= moved
            tree = {p for p in tree if p != relative and not p.startswith(relative + "/")}
            tree |= {relative + p[len(old):] for p in moved}
        elif kind == "toggle":
            # fswatch reports both ends of a rename as "Renamed": the path that exists now
            # was added, the other removed.
            if os.path.lexists(path):
                tree.add(relative)
            else:
                tree = {p for p in tree if p != relative and not p.startswith(relative + "/")}
    return tree


def disk(root):
    found = set()
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(directory, name)
            found.add(os.path.relpath(full, root))
    return {p for p in found if ".probe-" not in p and ".marker-" not in p}


# MARK: Measurements

def floor(*args):
    return json.loads(subprocess.run([FLOOR, *args], capture_output=True, text=True, check=True).stdout)


def measure_latency(watcher, count=LATENCY_SAMPLES):
    root = tempfile.mkdtemp(dir=WORK)
    watcher.start(root)
    samples = []
    try:
        for index in range(count):
            name = f"lat-{index}.txt"
            start = watcher.count()
            # From just before the create: a watcher reporting IN_CREATE may print before the
            # create's close(2) returns, so timing from there would score the fastest as 0.
            written = time.monotonic()
            with open(os.path.join(root, name), "w"):
                pass
            seen = watcher.wait_for(lambda line, n=name: n in line, start=start, timeout=10)
            if seen is not None:
                samples.append(max(0.0, seen - written) * 1e6)
    finally:
        watcher.stop()
    return samples


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


def rss_kib(pid):
    """Resident set size of a process, KiB, from /proc (VmRSS: anonymous and file pages)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def settled_rss(watcher, seconds):
    """RSS right after `ready`, and the peak over the next `seconds` (a polling watcher keeps
    scanning: memory that grows scan after scan shows up as the peak)."""
    after = rss_kib(watcher.process.pid)
    peak, deadline = after or 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.05)
        peak = max(peak, rss_kib(watcher.process.pid) or 0)
    return after, peak


def measure_ready(factory, root):
    """Time to ready on `root` and the RSS after it, for one run."""
    watcher = factory()
    watcher.start(root)
    ready_after = watcher.ready_after
    memory = settled_rss(watcher, 0.5)
    watcher.stop()
    return ready_after, memory


def measure_memory(factory, root, seconds, ready_multiple=0):
    """RSS after ready and its peak over `seconds`, or over `ready_multiple` times the time to
    ready if longer (for a polling watcher: about that many scans)."""
    watcher = factory()
    watcher.start(root)
    after, peak = settled_rss(watcher, max(seconds, ready_multiple * watcher.ready_after))
    ready_after = watcher.ready_after
    watcher.stop()
    return {"after_ready_kib": after, "peak_kib": peak, "ready_seconds": ready_after}


BURST_RUNS = int(os.environ.get("BURST_RUNS", "3"))
MEMORY_TREE_DIRECTORIES = [10, 100, 1_000] + ([10_000] if os.environ.get("MEMORY_1M", "1") == "1" else [])
SIZE_LABELS = ["1k", "10k", "100k", "1M"][:len(MEMORY_TREE_DIRECTORIES)]
SIZE_ENTRIES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}
BURST_FILES = int(os.environ.get("BURST_FILES", "20000"))


def measure_burst(factory):
    """BURST_FILES empty files created in one tmpfs directory by floor.c as fast as one thread
    can; from the writer's start to the line for the last file read from the watcher's pipe.
    Lines are read in large chunks here, so the reader is not what is measured."""
    import re
    root = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else WORK, prefix="filewatch-flood-")
    watcher = factory()
    # This measurement reads the pipe itself: the watcher's reader threads are not started.
    command = [a.replace("{root}", root) for a in watcher.command]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    def drain(stream):
        for _ in iter(lambda: stream.read1(65536), b""):
            pass
    if not watcher.ready_on_stderr:
        threading.Thread(target=drain, args=(process.stderr,), daemon=True).start()
    ready_stream = process.stderr if watcher.ready_on_stderr else process.stdout
    while True:
        line = ready_stream.readline()
        if not line:
            raise RuntimeError(f"{watcher.name} ended before ready")
        if watcher.ready_marker.encode() in line:
            break
    if watcher.ready_on_stderr:
        threading.Thread(target=drain, args=(process.stderr,), daemon=True).start()
    pattern = re.compile(rb"burst-(\d+)")
    seen, rest = set(), b""
    started = time.monotonic()
    writer = subprocess.Popen([FLOOR, "create", root, str(BURST_FILES)], stdout=subprocess.PIPE)
    finished = None
    # Nothing is printed between the ready line and the first create, so readline() above
    # buffered nothing that the raw reads below would miss.
    fd = process.stdout.fileno()
    import select
    deadline = started + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        seen.update(pattern.findall(data[:cut]))
        if len(seen) >= BURST_FILES:
            finished = time.monotonic()
            break
    written = json.loads(writer.communicate()[0])
    # What the watcher holds once it has told of every file: the code and memory a burst
    # brought in (RSS after `ready` alone would not show what events cost).
    rss_after = rss_kib(process.pid)
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
    shutil.rmtree(root, ignore_errors=True)
    seconds = (finished - started) if finished else None
    return {"files": BURST_FILES, "reported": len(seen), "seconds": seconds,
            "files_per_second": BURST_FILES / seconds if seconds else None,
            "writer_seconds": written["create_seconds"], "rss_after_kib": rss_after}


def burst(root, seed, outside):
    """Seeded bursts of creates, renames, mkdir -p trees, moves in and out, deletions."""
    rng = random.Random(seed)
    for step in range(120):
        choice = rng.randrange(6)
        entries = [os.path.join(d, n) for d, ds, fs in os.walk(root) for n in ds + fs if ".probe-" not in n]
        dirs = [root] + [e for e in entries if os.path.isdir(e) and not os.path.islink(e)]
        files = [e for e in entries if os.path.isfile(e)]
        target = rng.choice(dirs)
        if choice == 0:
            open(os.path.join(target, f"s{seed}-f{step}"), "w").close()
        elif choice == 1:
            deep = os.path.join(target, f"s{seed}-p{step}", "a", "b", "c")
            os.makedirs(deep)
            open(os.path.join(deep, "leaf"), "w").close()
        elif choice == 2 and files:
            os.rename(rng.choice(files), os.path.join(target, f"s{seed}-r{step}"))
        elif choice == 3 and len(dirs) > 1:
            source = rng.choice(dirs[1:])
            candidates = [d for d in dirs if not (d == source or d.startswith(source + "/"))]
            os.rename(source, os.path.join(rng.choice(candidates), f"s{seed}-m{step}"))
        elif choice == 4 and len(entries) > 0:
            victim = rng.choice(entries)
            if os.path.isdir(victim) and not os.path.islink(victim):
                os.rename(victim, os.path.join(outside, f"s{seed}-out{step}"))
            else:
                os.remove(victim)
        else:
            staging = os.path.join(outside, f"s{seed}-in{step}")
            os.makedirs(os.path.join(staging, "x", "y"))
            open(os.path.join(staging, "x", "y", "z"), "w").close()
            os.rename(staging, os.path.join(target, f"s{seed}-in{step}"))


def measure_fidelity(watcher):
    exact = 0
    details = []
    for seed in range(1, SEEDS + 1):
        base = tempfile.mkdtemp(dir=WORK)
        root, outside = os.path.join(base, "root"), os.path.join(base, "outside")
        os.makedirs(root)
        os.makedirs(outside)
        make_tree(root, 20, 3)
        watcher.lines = []
        watcher.ready.clear()
        watcher.start(root)
        initial = disk(root)
        start = watcher.count()
        burst(root, seed, outside)
        marker = os.path.join(root, f".marker-{seed}")
        open(marker, "w").close()
        watcher.wait_for(lambda line: f".marker-{seed}" in line, start=start, timeout=30)
        # Let a slow (polling) watcher finish the rest of its report.
        time.sleep(1.0)
        watcher.stop()
        events = watcher.parse(watcher.lines)
        replayed = {p for p in replay(initial, events, root) if ".marker-" not in p and ".probe-" not in p}
        actual = disk(root)
        missing, extra = len(actual - replayed), len(replayed - actual)
        if not missing and not extra:
            exact += 1
        details.append((missing, extra))
        watcher.lines = []
    return exact, details


def main():
    if os.environ.get("REPORT_ONLY") == "1":
        # Rewrites docs/benchmarks.md and its plots from the last run's raw results.
        with open(os.path.join(ROOT, "docs", "benchmark-peer-results.json")) as saved:
            results = json.load(saved)
        if "date" not in results:
            # Results saved before the date was kept: the day they were committed.
            committed = subprocess.run(["git", "log", "-1", "--format=%cs", "--", "docs/benchmark-peer-results.json"],
                                       capture_output=True, text=True, cwd=ROOT).stdout.strip()
            if committed:
                results["date"] = committed
        write_report(results)
        return
    # The command and seed count are kept with the raw results, so REPORT_ONLY=1 can name them.
    results = {"floor": {}, "latency": {}, "ready": {}, "fidelity": {}, "burst": {}, "memory": {},
               "command": os.environ.get("COMPARE_COMMAND", "scripts/compare-peers.sh"), "seeds": SEEDS,
               "latency_rounds": LATENCY_ROUNDS, "ready_in_rounds": True,
               "date": time.strftime("%Y-%m-%d")}
    results["floor"]["latency"] = floor("latency", tempfile.mkdtemp(dir=WORK), str(LATENCY_SAMPLES))
    big = os.path.join(WORK, "tree-10k-dirs")
    os.makedirs(big)
    make_tree(big, 10_000, 10)
    results["floor"]["addwatch"] = floor("addwatch", big)
    results["floor"]["walk"] = floor("walk", big)
    # The same floors on the benchmark package's trees, so its scan and start-up figures
    # divide by a floor measured on the very same tree.
    results["floor"]["trees"] = {}
    for label, name in BENCHMARK_TREES.items():
        tree = os.path.join(BENCHMARK_TREE_BASE, name)
        if os.path.exists(os.path.join(tree, ".complete")):
            results["floor"]["trees"][label] = {"walk": floor("walk", tree), "addwatch": floor("addwatch", tree)}

    # Memory against tree size: D directories × 100 files, 1k to 1M entries (1M only with
    # MEMORY_1M=1 or a full run: it takes a minute to make and ~1.5 GiB of inodes).
    size_trees = {}
    for directories in MEMORY_TREE_DIRECTORIES:
        tree = os.path.join(WORK, f"size-{directories}x100")
        os.makedirs(tree)
        subprocess.run([FLOOR, "mktree", tree, str(directories), "100"], check=True)
        size_trees[SIZE_LABELS[MEMORY_TREE_DIRECTORIES.index(directories)]] = tree

    # Latency in rounds, each watcher in turn within a round, so that a machine whose speed drifts
    # during the run (a shared host) weighs on every watcher alike rather than on whichever
    # was measured in its slow minutes: in one block per watcher, two runs an hour apart put
    # inotifywait at 45 and 39 µs and the C watcher, which does less, at 59 and 62.
    watchers = peers()
    per_round = max(1, LATENCY_SAMPLES // LATENCY_ROUNDS)
    latency_samples = {watcher.name: [] for watcher in watchers}
    # Each round starts a fresh process, so its first create is the first event after `ready`,
    # which pays whatever a watcher left for its first event (code paged in, a runtime's lazily
    # made type data): kept apart as well, since it is at most one sample in a round and its
    # cost otherwise shows only as p99.
    first_samples = {watcher.name: [] for watcher in watchers}
    for round_index in range(LATENCY_ROUNDS):
        for watcher in watchers:
            print(f"== latency, round {round_index + 1} of {LATENCY_ROUNDS}: {watcher.name}", file=sys.stderr)
            got = measure_latency(watcher.fresh(), per_round)
            latency_samples[watcher.name] += got
            if got:
                first_samples[watcher.name].append(got[0])
    # Time to ready in rounds too, for the same reason: run one after the other, five runs of
    # each watcher in a block, filewatch's ready went from 191 to 246 ms between two runs a day
    # apart while inotifywait's stayed at 360 and 361 ms, and the same two builds measured in
    # turn on the same day took 205 and 213 ms.
    ready_watchers = [watcher for watcher in watchers if not watcher.name.startswith("fswatch") and "polling" not in watcher.name]
    for round_index in range(READY_RUNS):
        for watcher in ready_watchers:
            print(f"== ready, round {round_index + 1} of {READY_RUNS}: {watcher.name}", file=sys.stderr)
            ready_after, memory = measure_ready(watcher.fresh, big)
            results["ready"].setdefault(watcher.name, []).append(ready_after)
            results["memory"].setdefault(watcher.name, {}).setdefault("110k", []).append(memory)
    for watcher in watchers:
        print(f"== {watcher.name}", file=sys.stderr)
        samples = latency_samples[watcher.name]
        results["latency"][watcher.name] = {
            "p50_us": percentile(samples, 0.5), "p90_us": percentile(samples, 0.9),
            "p99_us": percentile(samples, 0.99), "max_us": max(samples) if samples else float("nan"),
            "received": len(samples), "sent": per_round * LATENCY_ROUNDS, "samples": samples,
            "first_after_ready_us": first_samples[watcher.name],
        }
        name = watcher.name
        if not name.startswith(("fswatch", "watchdog")) and "poll" not in name:
            results["burst"][name] = [measure_burst(watcher.fresh) for _ in range(BURST_RUNS)]
        if not name.startswith("fswatch"):
            memory = results["memory"].setdefault(name, {})
            memory["empty"] = measure_memory(watcher.fresh, tempfile.mkdtemp(dir=WORK), 0.5)
            if name.startswith("filewatch") or name in ("inotifywait", C_WATCHER):
                for label, tree in size_trees.items():
                    # A polling watcher scans on: its peak over a few scans is what it costs.
                    polling = "poll" in name
                    memory[label] = measure_memory(watcher.fresh, tree, 2.0 if polling else 0.5, 3 if polling else 0)
        if watcher.parse is not None:
            exact, details = measure_fidelity(watcher.fresh())
            results["fidelity"][name] = {"exact": exact, "seeds": SEEDS, "details": details}

    # What the deployment build weighs: as built, and stripped of debug information.
    stripped = os.path.join(WORK, "filewatch-stripped")
    subprocess.run(["strip", "-o", stripped, FILEWATCH], check=False)
    results["binary"] = {"bytes": os.path.getsize(FILEWATCH),
                         "stripped_bytes": os.path.getsize(stripped) if os.path.exists(stripped) else None,
                         "libraries": subprocess.run(["ldd", FILEWATCH], capture_output=True, text=True).stdout.split("\n")}
    with open(os.path.join(ROOT, "docs", "benchmark-peer-results.json"), "w") as out:
        json.dump(results, out, indent=1)
    write_report(results)
    shutil.rmtree(WORK, ignore_errors=True)


def write_report(results):
    floor_latency = results["floor"]["latency"]["latency_p50_us"]
    floor_p99 = results["floor"]["latency"]["latency_p99_us"]
    machine = subprocess.run(["uname", "-srm"], capture_output=True, text=True).stdout.strip()
    cpus = os.cpu_count()
    lines = [
        "# Benchmarks",
        "",
        "Generated by `scripts/compare-peers.sh` (do not edit by hand): every figure below was measured",
        f"in one run on the same trees, on {machine} with {cpus} CPUs, on {results.get('date', time.strftime('%Y-%m-%d'))}, by",
        "",
        f"    {results.get('command', os.environ.get('COMPARE_COMMAND', 'scripts/compare-peers.sh'))}",
        "",
        "Absolute times drift on a shared machine; compare the ratios. Every figure is a median (p50)",
        "unless its column says otherwise. Raw peer samples: [benchmark-peer-results.json](benchmark-peer-results.json).",
        "",
        *([] if "BENCHMARK_PACKAGE=1" in results.get("command", "") or os.environ.get("BENCHMARK_PACKAGE") == "1" else [
            "**The benchmark package was not run this time** (`BENCHMARK_PACKAGE=1` runs it): its tables, and the",
            "ratios computed from them, come from the committed [benchmark-package-output.txt](benchmark-package-output.txt)",
            "of an earlier run, divided by this run's floors.", ""]),
        *headlines(results),
        *targets_report(results),
        "## Running one benchmark quickly",
        "",
        "```sh",
        "cd Benchmarks",
        'swift package benchmark --filter "latency: create \\(inotify\\)"   # one benchmark, ~10 s',
        'FILEWATCH_BENCHMARK_SKIP_LARGE=1 swift package benchmark --filter "scan.*"   # without the 1M trees',
        "swift package benchmark baseline check main   # fails on a regression against the stored baseline",
        "```",
        "",
        "## Kernel floors (scripts/peers/floor.c)",
        "",
        f"- write(2) to a blocked read(2) on an inotify descriptor: p50 {floor_latency:.0f} µs, p99 {floor_p99:.0f} µs",
        f"- list and watch {results['floor']['addwatch']['directories']} directories: {results['floor']['addwatch']['list_and_watch_seconds']:.3f} s "
        f"({results['floor']['addwatch']['addwatch_us_per_directory']:.1f} µs per directory)",
        *([f"- the same with an fstatat per regular file (its link count, which filewatch's inotify backend reads at "
           f"start-up): {results['floor']['addwatch']['list_watch_and_stat_seconds']:.3f} s, one thread"]
          if "list_watch_and_stat_seconds" in results["floor"]["addwatch"] else []),
        f"- getdents64 + fstatat walk: {results['floor']['walk']['entries_per_second']:,.0f} entries/s "
        f"({results['floor']['walk']['entries']:,} entries)",
        "",
        "## Event latency (file create → event printed), one watcher process each",
        "",
        "| watcher | p50 | p90 | p99 | max | first event after `ready` (p50 over rounds) | p50 / floor | p99 / floor | received |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results["latency"].items():
        firsts = r.get("first_after_ready_us") or []
        first = f"{percentile(firsts, 0.5):.0f} µs" if firsts else "–"
        lines.append(f"| {name} | {r['p50_us']:.0f} µs | {r['p90_us']:.0f} µs | {r['p99_us']:.0f} µs | {r['max_us']:.0f} µs | {first} | "
                     f"{r['p50_us'] / floor_latency:.1f}× | {r['p99_us'] / floor_p99:.1f}× | {r['received']}/{r['sent']} |")
    rounds = results.get("latency_rounds", 1)
    lines += ["", "Latency here runs from just before the create's open(2) to this script reading the watcher's line from",
              "a pipe, for every watcher alike (so it includes the create itself, which the kernel floor does not); the",
              "library-level latency, without printing and pipes, is in the benchmark package (below)."
              + (f" Measured in {rounds} rounds, each watcher in turn within a round, so that a drift of the machine's"
                 " speed during the run weighs on every watcher alike." if rounds > 1 else ""), "",
              f"## Start-up: `ready` on {results['floor']['addwatch']['directories']:,} directories × 10 files", "",
              "| watcher | median | / floor (list and watch) | / floor (list, watch, stat each file) |", "|---|---|---|---|"]
    floor_ready = results["floor"]["addwatch"]["list_and_watch_seconds"]
    floor_stat = results["floor"]["addwatch"].get("list_watch_and_stat_seconds")
    for name, times in results["ready"].items():
        with_stat = f"{statistics.median(times) / floor_stat:.2f}×" if floor_stat else "–"
        lines.append(f"| {name} | {statistics.median(times):.3f} s | {statistics.median(times) / floor_ready:.1f}× | {with_stat} |")
    ready_runs = len(next(iter(results["ready"].values()), []))
    lines += ["", "fswatch prints no ready signal, and polling watchers are ready after one scan; they are left out."
              + (f" Measured in {ready_runs} rounds, each watcher in turn within a round, as latency is." if results.get("ready_in_rounds") else ""), "",
              f"## Fidelity: does replaying the watcher's output reproduce the tree? ({results.get('seeds', SEEDS)} seeded bursts)", "",
              "Each burst: 120 seeded operations (creates, `mkdir -p` trees with a file at the bottom, renames of files",
              "and directories, moves out of and into the tree, deletions) as fast as possible, then a marker file.",
              "", "| watcher | exact replays | paths missing / extra per burst |", "|---|---|---|"]
    for name, r in results["fidelity"].items():
        lines.append(f"| {name} | {r['exact']}/{r['seeds']} | {', '.join(f'{m}/{e}' for m, e in r['details'])} |")
    lines += ["", "![latency](images/latency.png)", "", "![start-up and scan cost against tree size](images/size-costs.png)", ""]
    lines += burst_and_memory_report(results)
    lines += follow_report()
    lines += package_report(results)
    lines += group_runs_report()
    with open(os.path.join(ROOT, "docs", "benchmarks.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        os.makedirs(os.path.join(ROOT, "docs", "images"), exist_ok=True)
        figure, axis = plt.subplots(figsize=(9, 5))
        for name, r in results["latency"].items():
            samples = sorted(r["samples"])
            if samples:
                axis.plot(samples, [i / len(samples) for i in range(len(samples))], label=name)
        axis.axvline(floor_latency, color="black", linestyle=":", label="kernel floor p50")
        label_axis(axis, "latency, µs (log)", "fraction of events", "File create → event, cumulative distribution", log_y=False)
        save_figure(figure, "latency.png")
        plot_sizes(plt)
        plot_memory(plt, results)
    except ImportError:
        print("matplotlib missing: no plots", file=sys.stderr)


FOLLOW_RESULTS = os.path.join(ROOT, "docs", "follow-vs-tail-results.json")

# Runs of one group of package benchmarks (`--filter`), kept beside the full run's output:
# file, section title, what the figures are for.
GROUP_RUNS = [
    ("benchmark-subscription-output.txt", "Subscriptions of one shared watcher against independent sources",
     "Cost of one more subscription to a `FileSystemWatcher` (time to its `ready`), and the kernel watches and "
     "inotify instances that 100 subscriptions hold against 100 independent sources of the same trees."),
    ("benchmark-snapshot-output.txt", "Saved snapshots: save, load, size, and changes since",
     "`FileTreeSnapshot.save(to:)` and `load(from:root:)` (docs/snapshot-format.md), the bytes per entry on "
     "disk, and `changes(since:)` on an unchanged tree (a load, then one scan and diff)."),
    ("benchmark-scan-output.txt", "Polling scan and start-up next to the C floor walk, in one run",
     "Issue 17's polling target: a scan and diff of an unchanged tree examines at least 0.8× the entries per second "
     "of the C `getdents64` + `fstatat` walk (`scan floor:`, Benchmarks/KernelFloors), both on the same tree in the "
     "same run; and the time to `ready` and the heap each backend's model holds on the 100k-entry tree."),
    ("benchmark-changes-vs-scan-output.txt", "`changes(since:)` next to one polling scan, 1M entries, in one run",
     "Issue 15's target: `changes(since:)` on an unchanged tree costs no more than one polling scan and diff of it. "
     "`FileTreeSnapshot.changes(sinceSnapshotAt:root:)` (what `filewatch changes` runs) decodes the saved file on a "
     "second thread while the tree is rescanned, and frees the consumed saved tree on another thread after the diff, "
     "so what it costs above the scan is reading the file and the diff's share of the second core. Each side keeps "
     "its new snapshot past the measurement (`scan+diff` frees the previous tree inside it, as the polling backend "
     "does every interval)."),
]


def group_runs_report():
    """One table per group run: every benchmark's p50 for each metric, with the command that ran it."""
    lines = []
    for file, title, purpose in GROUP_RUNS:
        path = os.path.join(ROOT, "docs", file)
        results = benchmark_results(path)
        if not results:
            continue
        first = open(path).readline().strip()
        command = first[1:].strip() if first.startswith("#") else "swift package benchmark"
        lines += [f"### {title}", "", purpose, "",
                  f"Measured by `{command}`; raw tables: [{file}]({file}). Medians (p50):", "",
                  "| benchmark | metric | p50 | samples |", "|---|---|---|---|"]
        for name in sorted(results):
            for metric, values in results[name].items():
                value = values.get("p50")
                if metric.startswith("Time"):
                    shown = fmt_time(value)
                elif metric.startswith("Memory"):
                    shown = fmt_bytes(value)
                else:
                    shown = f"{value:,.0f}" if value is not None else "–"
                lines.append(f"| {name} | {metric} | {shown} | {values.get('samples', '–')} |")
        lines.append("")
    return lines


def follow_report():
    """The `filewatch follow` / `tail -F` section, from scripts/follow-vs-tail.sh's last results."""
    if not os.path.exists(FOLLOW_RESULTS):
        return []
    with open(FOLLOW_RESULTS) as saved:
        r = json.load(saved)
    tail, ours = "tail -F", "filewatch follow"

    def ratio(key, inverse=False):
        a, b = r.get(f"{key} ({ours})"), r.get(f"{key} ({tail})")
        if not a or not b:
            return "–"
        return f"{(b / a) if inverse else (a / b):.2f}×"

    written = r.get("rotation_bytes_written", 0)
    return [
        "## Following a file: `filewatch follow` next to GNU `tail -F` (scripts/follow-vs-tail.sh)", "",
        f"Measured by `scripts/follow-vs-tail.sh` (which `compare-peers.sh` runs) on {r.get('date', 'an earlier day')}, with",
        f"`{r.get('binary', 'a release build')}`. Both follow the same files in the same run, printing to a pipe;",
        f"`filewatch follow` uses the {r['backend']} backend. Throughput: {r['megabytes']:,} MiB appended in 64 KiB writes by a",
        "C writer as fast as it can, from its first write to the last byte read from the follower's stdout. Latency: one",
        f"line appended at a time, {r['latency_samples']:,} times, from just before its write(2) to its arrival on the",
        "follower's stdout.",
        f"Rotation: {r['rotations']:,} rotations by rename {r['pause_us']:,} µs apart, the writer adding a line to the renamed",
        "file before it reopens the path (logrotate's `create`), both followers running at once.", "",
        f"| measure | {tail} | {ours} | {ours} / {tail} |", "|---|---|---|---|",
        f"| throughput | {r[f'throughput_mib_s ({tail})']:,.0f} MiB/s | {r[f'throughput_mib_s ({ours})']:,.0f} MiB/s | {ratio('throughput_mib_s')} |",
        f"| latency p50 | {r[f'latency_p50_us ({tail})']:.0f} µs | {r[f'latency_p50_us ({ours})']:.0f} µs | {ratio('latency_p50_us')} |",
        f"| latency p99 | {r[f'latency_p99_us ({tail})']:.0f} µs | {r[f'latency_p99_us ({ours})']:.0f} µs | {ratio('latency_p99_us')} |",
        f"| bytes lost across the rotations (of {written:,}) | {r[f'rotation_bytes_lost ({tail})']:,} | {r[f'rotation_bytes_lost ({ours})']:,} | |",
        "",
        "`tail -F` loses every line written to a renamed file after it switched to the new one; the follower reads the",
        "renamed file to its end first. Its latency is one thread hop longer than `tail -F`'s: the watch's thread wakes the",
        "task that reads the file, where `tail` reads on the thread that read the inotify event",
        "([following-files.md](following-files.md)).", "",
    ]


PACKAGE_OUTPUT = os.path.join(ROOT, "docs", "benchmark-package-output.txt")
UNIT_SCALE = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6, "K": 1e3, "M": 1e6, "G": 1e9}
PERCENTILES = ["p0", "p25", "p50", "p75", "p90", "p99", "p100"]


def walk_floor(package, floor, label):
    """Entries per second of the C floor walk on `label`'s tree: the benchmark package's own run
    of it (`scan floor:`), beside the polling scan in the same process and run, when there is
    one; else the floor program's run in this script."""
    rate = package.get(f"scan floor: {label} (C getdents64+fstatat)", {}).get("Entries per second", {}).get("p50")
    return rate or floor.get("trees", {}).get(label, {}).get("walk", {}).get("entries_per_second")


def polling_scan_figures(package, floor):
    """Entries per second of a polling scan+diff of the 100k-entry tree and of the C floor walk on
    it: from the full package run when it has the floor beside the scan (every run since the
    floor joined the package), so that the figure is of the same run as the rest; else from the
    scan group's earlier run (docs/benchmark-scan-output.txt)."""
    floor_name = "scan floor: 100k entries (C getdents64+fstatat)"
    results = package
    if floor_name not in package:
        group = benchmark_results(os.path.join(ROOT, "docs", "benchmark-scan-output.txt"))
        if floor_name in group:
            results = group
    scan = results.get("scan+diff: 100k entries (polling)", {}).get("Entries per second", {}).get("p50")
    return scan, walk_floor(results, floor, "100k entries")


def benchmark_results(path=PACKAGE_OUTPUT):
    """{benchmark: {metric: {percentile: value}}} from the benchmark package's text tables.

    Times become µs and scaled counts plain numbers ("(K)" is thousands), whatever unit the
    table printed them in.
    """
    import re
    if not os.path.exists(path):
        return {}
    results, name = {}, None
    text_lines = re.sub(r"\x1b\[[0-9;]*m", "", open(path).read()).splitlines()
    for index, line in enumerate(text_lines):
        following = text_lines[index + 1] if index + 1 < len(text_lines) else ""
        if re.match(r"^[a-z].*\(.*\)$", line) or (re.match(r"^[a-z0-9]", line) and following.startswith("╒")):
            name = line.strip()
            continue
        cells = [c.strip() for c in line.split("│") if c.strip()]
        if not name or len(cells) != 9 or cells[0] == "Metric":
            continue
        label = cells[0].rstrip(" *")
        unit = re.search(r"\(([^()]*)\)$", label)
        scale = UNIT_SCALE.get(unit.group(1), 1.0) if unit else 1.0
        metric = re.sub(r"\s*\([^()]*\)$", "", label) if unit and unit.group(1) in UNIT_SCALE else label
        try:
            values = {p: float(v) * scale for p, v in zip(PERCENTILES, cells[1:8])}
        except ValueError:
            continue
        values["samples"] = int(cells[8])
        results.setdefault(name, {})[metric] = values
    return results


def wall(results, name, percentile="p50"):
    return results.get(name, {}).get("Time (wall clock)", {}).get(percentile)


def fmt_time(us):
    if us is None:
        return "–"
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.1f} ms"
    return f"{us:.0f} µs"


def fmt_bytes(value):
    if value is None:
        return "–"
    for unit, size in [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)]:
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value:.0f} B"


def package_report(peer_results):
    """Tables from the benchmark package's run, each figure next to its floor."""
    results = benchmark_results()
    if not results:
        return ["## The benchmark package", "", "Not run (set BENCHMARK_PACKAGE=1).", ""]
    backends = [b for b in ["inotify", "inotifytools", "polling"] if any(k.endswith(f"({b})") for k in results)]
    floor = peer_results["floor"]
    lines = ["## The benchmark package (`Benchmarks/`)", "",
             "In-process figures from `swift package benchmark` (package-benchmark), run by the same invocation;",
             "the raw tables are in [benchmark-package-output.txt](benchmark-package-output.txt).", "",
             "### Event latency: the change's syscall returning → the event reaching the consumer", "",
             "| backend | change | p50 | p90 | p99 | max | p50 / floor p50 | p99 / floor p99 | samples |",
             "|---|---|---|---|---|---|---|---|---|"]
    for backend in backends:
        for change in ["create", "append", "rename"]:
            metric = results.get(f"latency: {change} ({backend})", {}).get("Time (wall clock)")
            if metric:
                lines.append(f"| {backend} | {change} | {fmt_time(metric['p50'])} | {fmt_time(metric['p90'])} | "
                             f"{fmt_time(metric['p99'])} | {fmt_time(metric['p100'])} | "
                             f"{metric['p50'] / floor['latency']['latency_p50_us']:.1f}× | "
                             f"{metric['p99'] / floor['latency']['latency_p99_us']:.1f}× | {metric['samples']} |")
    lines += ["", "Polling runs at a 10 ms interval, so its latency is the interval, not the backend. The kernel floor",
              "is timed from just before write(2), so it includes the system call; these from the syscall returning,",
              "as the issue defines latency. A ratio under 1× means the event was mostly through by then.", "",
              "### Start-up: creating the source → `ready`, and the heap it holds then", "",
              "Heap is bytes malloc'd minus bytes freed between the two (the watch's model, buffers and, for",
              "inotifytools, the C library's tables); kernel memory for inotify watches is not in it.", "",
              "| tree | backend | ready p50 | / floor (list + watch, same tree) | heap after ready | heap per directory |",
              "|---|---|---|---|---|---|"]
    for label in BENCHMARK_TREES:
        tree_floor = floor.get("trees", {}).get(label, {}).get("addwatch", {}).get("list_and_watch_seconds")
        for backend in backends:
            name = f"ready: {label} ({backend})"
            if name not in results:
                continue
            time_us = wall(results, name)
            heap = results.get(f"heap after ready: {label} ({backend})", {}).get("Malloc / free Δ (bytes)", {}).get("p50")
            ratio = f"{time_us / (tree_floor * 1e6):.1f}×" if tree_floor and backend != "polling" else "–"
            per_directory = fmt_bytes(heap / TREE_DIRECTORIES[label]) if heap else "–"
            lines.append(f"| {label} | {backend} | {fmt_time(time_us)} | {ratio} | {fmt_bytes(heap)} | {per_directory} |")
    lines += ["", "### Polling: one scan + diff of an unchanged tree, and the snapshot it keeps", "",
              "| tree | scan+diff p50 | CPU p50 | entries/s | / floor walk (same tree) | snapshot heap | per entry |",
              "|---|---|---|---|---|---|---|"]
    for label in BENCHMARK_TREES:
        name = f"scan+diff: {label} (polling)"
        if name not in results:
            continue
        rate = results[name].get("Entries per second", {}).get("p50")
        walk = walk_floor(results, floor, label)
        heap = results.get(f"scan: {label} (polling)", {}).get("Malloc / free Δ (bytes)", {}).get("p50")
        cpu = results[name].get("Time (total CPU)", {}).get("p50")
        ratio = f"{rate / walk:.2f}" if rate and walk else "–"
        lines.append(f"| {label} | {fmt_time(wall(results, name))} | {fmt_time(cpu)} | {rate:,.0f} | "
                     f"{ratio} | {fmt_bytes(heap)} | "
                     f"{fmt_bytes(heap / TREE_ENTRIES[label]) if heap else '–'} |")
    lines += ["", "The floor walk is `getdents64` + `fstatat` in C (Benchmarks/KernelFloors), single-threaded, run by the benchmark "
              "package beside the scan on the same tree (`scan floor:`; from the floor program where an older output lacks it).",
              "CPU time is sampled by the kernel in 10 ms ticks.", "",
              "### Recovery after a real kernel queue overflow", "",
              "A stalled consumer (300 distinct changes fill its buffer), then four times `fs.inotify.max_queued_events`",
              "of attribute changes and a marker file the full queue drops; from the consumer resuming to the",
              "marker's `created`: reading what was queued, the rescan, the diff against the model, delivery.", "",
              "| tree | backend | p50 | p90 | / ready on the same tree |", "|---|---|---|---|---|"]
    for label in BENCHMARK_TREES:
        for backend in backends:
            name = f"overflow rescan: {label} ({backend})"
            if name in results:
                ready = wall(results, f"ready: {label} ({backend})")
                ratio = f"{wall(results, name) / ready:.1f}×" if ready else "–"
                lines.append(f"| {label} | {backend} | {fmt_time(wall(results, name))} | {fmt_time(wall(results, name, 'p90'))} | {ratio} |")
    lines += burst_report(results, backends, "burst: 20k files",
                          "Burst: 20,000 files created as fast as one thread can (on tmpfs)",
                          ["The benchmark fails if a single `created` is missing, so every row below delivered all 20,000."],
                          "first create → last event")
    lines += burst_report(results, backends, "burst: 10k hard links of one file",
                          "Burst: 10,000 hard links of one file made as fast as one thread can (on tmpfs)",
                          ["Each new name of a file is checked against the file's names in view (README, \"Hard links out of",
                           "view\"); this measures that the check stays linear. Every `created` is delivered or the benchmark fails."],
                          "first link → last event")
    lines += listing_report(results, backends)
    lines += settle_report(results, backends)
    lines.append("")
    return lines


def rate_rows(results, names):
    """One table row per (backend, benchmark name) measured: wall time, events/s and peak RSS, p50."""
    rows = []
    for backend, name in names:
        if name in results:
            rate = results[name].get("Events per second", {}).get("p50")
            rss = results[name].get("Memory (resident peak)", {}).get("p50")
            rows.append(f"| {backend} | {fmt_time(wall(results, name))} | {rate:,.0f} | {fmt_bytes(rss)} |")
    return rows


def burst_report(results, backends, benchmark, title, prose, span):
    """One burst benchmark's table (`{benchmark} ({backend})` for each backend): wall time,
    events per second and peak RSS, medians. Nothing if no backend ran it."""
    names = [(backend, f"{benchmark} ({backend})") for backend in backends]
    if not any(name in results for _, name in names):
        return []
    lines = ["", f"### {title}", ""] + prose + ["",
             f"| backend | {span}, p50 | events/s p50 | peak RSS |", "|---|---|---|---|"]
    lines += rate_rows(results, names)
    return lines


def settle_report(results, backends):
    """`settled`: the delay from close(2) to the event with a 50 ms quiet period, and a
    20,000-file burst until every file is settled."""
    if not any(f"settle: delay after close, quiet period 50 ms ({b})" in results for b in backends):
        return []
    lines = ["", "### Settled files: close(2) → `settled` at the consumer, quiet period 50 ms", "",
             "Subtract the 50 ms quiet period for what the backend adds. Polling also waits for a poll",
             "(10 ms here) and the scan. The comparison with chokidar and watchman is in",
             "[settling-comparison.md](settling-comparison.md).", "",
             "| backend | p50 | p99 | max | 20,000 files until all settled, p50 | settled/s p50 | peak RSS | samples |",
             "|---|---|---|---|---|---|---|---|"]
    for backend in backends:
        delay = results.get(f"settle: delay after close, quiet period 50 ms ({backend})", {}).get("Time (wall clock)")
        burst = f"settle: 20k-file burst until all settled ({backend})"
        if not delay:
            continue
        rate = results.get(burst, {}).get("Events per second", {}).get("p50")
        rss = results.get(burst, {}).get("Memory (resident peak)", {}).get("p50")
        lines.append(f"| {backend} | {fmt_time(delay['p50'])} | {fmt_time(delay['p99'])} | {fmt_time(delay['p100'])} | "
                     f"{fmt_time(wall(results, burst))} | {f'{rate:,.0f}' if rate else '–'} | {fmt_bytes(rss)} | {delay['samples']} |")
    return lines


def listing_report(results, backends):
    """DirectoryListing: create -> update by directory size (the 100,000 case should stay within
    2x of the 10 case), and a 10,000-file burst until the list holds every file."""
    sizes = [10, 10_000, 100_000]
    if not any(f"listing: create -> update, 10 entries ({b})" in results for b in backends):
        return []
    lines = ["", "### Directory listing: a file's creation → the update that shows it, by directory size", "",
             "`DirectoryListing` in a flat directory of N files; each sample creates one file and waits for the",
             "update whose `inserted` holds it (then deletes it again, unmeasured). Incremental means the",
             "100,000-entry directory costs about what the 10-entry one does.", "",
             "| backend | " + " | ".join(f"{n:,} entries p50 (p90)" for n in sizes) + " | 100,000 / 10 (p50) |",
             "|---|" + "---|" * (len(sizes) + 1)]
    for backend in backends:
        cells, p50 = [], {}
        for n in sizes:
            name = f"listing: create -> update, {n} entries ({backend})"
            p50[n] = wall(results, name)
            cells.append(f"{fmt_time(p50[n])} ({fmt_time(wall(results, name, 'p90'))})")
        ratio = f"{p50[100_000] / p50[10]:.1f}×" if p50[10] and p50[100_000] else "–"
        lines.append(f"| {backend} | " + " | ".join(cells) + f" | {ratio} |")
    lines += ["", "| backend | 10,000-file burst → list complete, p50 | files/s p50 | peak RSS |", "|---|---|---|---|"]
    lines += rate_rows(results, [(backend, f"listing: 10k-file burst ({backend})") for backend in backends])
    renames = [(backend, f"listing: 10k directory renames, recursive ({backend})") for backend in backends]
    if any(name in results for _, name in renames):
        lines += ["", "Recursive listing, 10,000 directories (one file each) renamed in one burst, until the list shows the marker made after them:",
                  "", "| backend | renames → list updated, p50 | renames/s p50 | peak RSS |", "|---|---|---|---|"]
        lines += rate_rows(results, renames)
    return lines


def headlines(results):
    """The ratios a team picks a backend by, computed from this run's tables."""
    package = benchmark_results()
    floor = results["floor"]
    lines = ["## Headlines", ""]
    create = package.get("latency: create (inotify)", {}).get("Time (wall clock)")
    if create:
        # The floor is timed from before write(2), the library from the syscall returning.
        lines.append(f"- Library latency, file create, raw inotify (from the syscall returning): p50 {fmt_time(create['p50'])} "
                     f"({create['p50'] / floor['latency']['latency_p50_us']:.1f}× the kernel floor, timed from before write), "
                     f"p99 {fmt_time(create['p99'])} ({create['p99'] / floor['latency']['latency_p99_us']:.1f}×).")
    ours = results["latency"].get("filewatch inotify")
    if ours:
        # Against the peers' inotify watchers: a polling peer's latency is its interval.
        others = [f"{name} {ours['p50_us'] / r['p50_us']:.2f}× / {ours['p99_us'] / r['p99_us']:.2f}×"
                  for name, r in results["latency"].items()
                  if not name.startswith("filewatch") and "poll" not in name and r["received"] and r["p50_us"] > 0 and r["p99_us"] > 0]
        lines.append(f"- CLI latency (create → line on a pipe), `filewatch --backend inotify`: p50 {ours['p50_us']:.0f} µs "
                     f"({ours['p50_us'] / floor['latency']['latency_p50_us']:.1f}× the floor), p99 {ours['p99_us']:.0f} µs; "
                     "p50 / p99 as a multiple of each inotify peer's: " + "; ".join(others) + ".")
    scan, walk = polling_scan_figures(package, floor)
    if scan and walk:
        lines.append(f"- Polling scan + diff, 100k entries: {scan:,.0f} entries/s, {scan / walk:.2f}× the C floor walk "
                     f"({walk:,.0f} entries/s) on the same tree.")
    if "filewatch inotify" in results["ready"] and "inotifywait" in results["ready"]:
        ours_ready = statistics.median(results["ready"]["filewatch inotify"])
        theirs = statistics.median(results["ready"]["inotifywait"])
        lines.append(f"- `ready` on 10,000 directories × 10 files: filewatch inotify {ours_ready:.3f} s, "
                     f"{ours_ready / theirs:.2f}× inotifywait's {theirs:.3f} s.")
    exact = [name for name, r in results["fidelity"].items() if r["exact"] == r["seeds"]]
    lines.append(f"- Fidelity: replaying the output reproduced the tree after every seeded burst for: {', '.join(exact) or 'none'}.")
    lines.append("")
    return lines


def mib(kib):
    return f"{kib / 1024:.1f} MiB" if kib else "–"


def burst_summary(results, name):
    runs = [r for r in results["burst"].get(name, []) if r.get("files_per_second")]
    complete = sum(1 for r in results["burst"].get(name, []) if r["reported"] == r["files"])
    rate = statistics.median(r["files_per_second"] for r in runs) if runs else None
    return rate, complete, len(results["burst"].get(name, []))


def burst_rss(results, name):
    """Median RSS (KiB) once the burst was told, over the runs that measured it."""
    samples = [r["rss_after_kib"] for r in results["burst"].get(name, []) if r.get("rss_after_kib")]
    return statistics.median(samples) if samples else None


def ready_memory(results, name, index):
    samples = [m[index] for m in results["memory"].get(name, {}).get("110k", []) if m[index]]
    return statistics.median(samples) if samples else None


def burst_and_memory_report(results):
    lines = [f"## Burst through the pipe: {BURST_FILES:,} creates in one directory", "",
             f"floor.c creates {BURST_FILES:,} empty files in one tmpfs directory as fast as one thread can; the time runs",
             "from the writer's start to reading the line for the last file from the watcher's pipe (read in",
             "large chunks, so this script is not the bottleneck). The writer alone, unwatched, is the ceiling.", "",
             "| watcher | files/s, median | / inotifywait | / C watcher | runs with every file reported | writer's own time | RSS after the burst |",
             "|---|---|---|---|---|---|---|"]
    reference = burst_summary(results, "inotifywait")[0]
    c_rate = burst_summary(results, C_WATCHER)[0]
    for name in results["burst"]:
        rate, complete, runs = burst_summary(results, name)
        writer = statistics.median(r["writer_seconds"] for r in results["burst"][name])
        lines.append(f"| {name} | {f'{rate:,.0f}' if rate else '–'} | {f'{rate / reference:.2f}×' if rate and reference else '–'} | "
                     f"{f'{rate / c_rate:.2f}×' if rate and c_rate else '–'} | {complete}/{runs} | {writer * 1e3:.0f} ms | "
                     f"{mib(burst_rss(results, name))} |")
    binary = results.get("binary")
    if binary:
        libraries = sorted({line.split()[0] for line in binary["libraries"] if "=>" in line or line.strip().startswith("/")})
        libraries = [name for name in libraries if not name.startswith("linux-vdso")]
        lines += ["", "## The filewatch binary measured here", "",
                  f"Built by `scripts/build-cli.sh` (README, \"Building the CLI for deployment\"): "
                  f"{binary['bytes'] / 1e6:.1f} MB as built, "
                  + (f"{binary['stripped_bytes'] / 1e6:.1f} MB stripped; " if binary.get("stripped_bytes") else "")
                  + ("it loads " + ", ".join(f"`{name}`" for name in libraries) + "." if libraries
                     else "a static executable, it loads no shared library.")]
    lines += ["", "## Memory: resident set size (VmRSS)", "",
              "After `ready` (median of the start-up runs on the 110k-entry tree; on the other trees one run),",
              "and for polling watchers the peak while they keep scanning (three times the time to ready, at",
              "least 2 s). VmRSS counts the shared libraries' touched pages too: that is what a deployment pays.",
              "filewatch unmaps the pages of its code that start-up mapped before it prints `ready` (they stay in",
              "the page cache; what runs later is mapped back): the burst table above gives its RSS once at work.", "",
              "| watcher | empty directory | 110k entries (10k dirs × 10) | " +
              " | ".join(f"{label} (dirs × 100)" for label in SIZE_LABELS) + " |",
              "|---|---|---|" + "---|" * len(SIZE_LABELS)]
    for name, memory in results["memory"].items():
        cells = [mib(memory.get("empty", {}).get("after_ready_kib")), mib(ready_memory(results, name, 0))]
        for label in SIZE_LABELS:
            entry = memory.get(label)
            if not entry:
                cells.append("–")
            elif entry["peak_kib"] and entry["after_ready_kib"] and entry["peak_kib"] > entry["after_ready_kib"] * 1.1:
                cells.append(f"{mib(entry['after_ready_kib'])} → {mib(entry['peak_kib'])}")
            else:
                cells.append(mib(entry["after_ready_kib"]))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "![memory against tree size](images/memory-size.png)", ""]
    return lines


def targets_report(results):
    """Issue 17's table: each figure, its ratio to inotifywait and to the C floor, and the target."""
    ours, theirs, c = "filewatch inotify", "inotifywait", C_WATCHER
    lat = results["latency"]
    rows = []

    def ratio(a, b):
        return f"{a / b:.2f}×" if a and b else "–"
    if ours in lat and theirs in lat:
        for key, label, target, limit in [("p50_us", "create → JSON line on a pipe, p50", "≤ 1.2× inotifywait", 1.2),
                                          ("p99_us", "same, p99", "≤ 2× inotifywait", 2.0)]:
            a, b = lat[ours][key], lat[theirs][key]
            cval = lat.get(c, {}).get(key)
            rows.append((label, f"{a:.0f} µs", f"{b:.0f} µs", f"{cval:.0f} µs" if cval else "–", ratio(a, b), ratio(a, cval),
                         target, "met" if a <= limit * b else "not met"))
    a, b, cval = burst_summary(results, ours)[0], burst_summary(results, theirs)[0], burst_summary(results, c)[0]
    if a and b:
        rows.append((f"{BURST_FILES:,} creates in one directory, files/s", f"{a:,.0f}", f"{b:,.0f}", f"{cval:,.0f}" if cval else "–",
                     ratio(a, b), ratio(a, cval), "≥ 0.9× inotifywait", "met" if a >= 0.9 * b else "not met"))
    ready = {n: statistics.median(t) for n, t in results["ready"].items()}
    floor_ready = results["floor"]["addwatch"]["list_and_watch_seconds"]
    floor_stat = results["floor"]["addwatch"].get("list_watch_and_stat_seconds")
    if ours in ready and theirs in ready:
        stat_floor = f"; with a stat per file {floor_stat * 1e3:.0f} ms, so {ratio(ready[ours], floor_stat)} of that" if floor_stat else ""
        rows.append(("time to `ready`, 110k entries (inotify)", f"{ready[ours] * 1e3:.0f} ms", f"{ready[theirs] * 1e3:.0f} ms",
                     f"{ready.get(c, 0) * 1e3:.0f} ms (floor.c list+watch {floor_ready * 1e3:.0f} ms{stat_floor})", ratio(ready[ours], ready[theirs]),
                     ratio(ready[ours], floor_ready), "≤ 0.5× inotifywait", "met" if ready[ours] <= 0.5 * ready[theirs] else "not met"))
        tools = "filewatch inotifytools"
        if tools in ready:
            rows.append(("time to `ready`, 110k entries (inotifytools)", f"{ready[tools] * 1e3:.0f} ms", f"{ready[theirs] * 1e3:.0f} ms", "–",
                         ratio(ready[tools], ready[theirs]), ratio(ready[tools], floor_ready), "≤ 2× raw inotify",
                         "met" if ready[tools] <= 2 * ready[ours] else "not met"))
    for backend, limit in [("inotify", 8), ("inotifytools", None), ("polling", 12)]:
        name = f"filewatch {backend}"
        a = ready_memory(results, name, 0) if backend != "polling" else results["memory"].get(name, {}).get("100k", {}).get("peak_kib")
        if not a:
            continue
        b, cval = ready_memory(results, theirs, 0), ready_memory(results, c, 0)
        label = "RSS after `ready`, 110k entries" if backend != "polling" else "RSS, 100k entries, peak over scans"
        rows.append((f"{label} ({backend})", mib(a), mib(b), mib(cval), ratio(a, b), ratio(a, cval),
                     f"≤ {limit} MiB" if limit else "–", ("met" if a <= limit * 1024 else "not met") if limit else "–"))
    empty = results["memory"].get(ours, {}).get("empty", {}).get("after_ready_kib")
    if empty:
        b = results["memory"].get(theirs, {}).get("empty", {}).get("after_ready_kib")
        cval = results["memory"].get(c, {}).get("empty", {}).get("after_ready_kib")
        rows.append(("RSS on an empty directory (inotify)", mib(empty), mib(b), mib(cval), ratio(empty, b), ratio(empty, cval),
                     "≤ 6 MiB", "met" if empty <= 6 * 1024 else "not met"))
    # The same watch once it has told of a burst: the code events run is resident again
    # (filewatch unmaps what start-up mapped of its code before `ready`), and the directory
    # then holds the burst's files, so this is a watch at work, not at rest; no target.
    busy = burst_rss(results, ours)
    if busy:
        b, cval = burst_rss(results, theirs), burst_rss(results, c)
        rows.append((f"RSS once {BURST_FILES:,} creates in an empty directory were told (inotify; it then holds them)", mib(busy), mib(b),
                     mib(cval), ratio(busy, b), ratio(busy, cval), "–", "–"))
    for backend, limit, key in [("inotify", 40, "after_ready_kib"), ("polling", 60, "peak_kib")]:
        entry = results["memory"].get(f"filewatch {backend}", {}).get("1M")
        if entry:
            b = results["memory"].get(theirs, {}).get("1M", {}).get("after_ready_kib")
            cval = results["memory"].get(c, {}).get("1M", {}).get("after_ready_kib")
            rows.append((f"RSS, 1M files in 10k directories ({backend}{', peak over scans' if key == 'peak_kib' else ''})",
                         mib(entry[key]), mib(b), mib(cval), ratio(entry[key], b), ratio(entry[key], cval),
                         f"≤ {limit} MiB", "met" if entry[key] <= limit * 1024 else "not met"))
    package = benchmark_results()
    scan, walk = polling_scan_figures(package, results["floor"])
    if scan and walk:
        rows.append(("polling: entries examined per second (one core, benchmark package, beside the C walk)", f"{scan:,.0f}", "–", f"{walk:,.0f} (C walk, same run)",
                     "–", ratio(scan, walk), "≥ 0.8× the C walk", "met" if scan >= 0.8 * walk else "not met"))
    if not rows:
        return []
    lines = ["## Issue 17's targets, from this run", "",
             "| figure | filewatch | inotifywait | C floor | / inotifywait | / floor | target | |",
             "|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def label_axis(axis, xlabel, ylabel, title, log_y=True):
    """Every plot here: a log x axis (log y unless told), labels, a small legend."""
    axis.set_xscale("log")
    if log_y:
        axis.set_yscale("log")
    axis.set_xlabel(xlabel)
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.legend(fontsize=8)


def save_figure(figure, name):
    figure.tight_layout()
    figure.savefig(os.path.join(ROOT, "docs", "images", name), dpi=110)


def plot_memory(plt, results):
    figure, axis = plt.subplots(figsize=(9, 5))
    for name, memory in results["memory"].items():
        points = [(SIZE_ENTRIES[label], memory[label]["peak_kib"] / 1024) for label in SIZE_LABELS if memory.get(label)]
        if len(points) > 1:
            axis.plot(*zip(*points), marker="o", label=name)
    label_axis(axis, "files in the tree (directories × 100)", "resident memory, MiB (log; polling: peak over scans)",
               "Memory against tree size")
    save_figure(figure, "memory-size.png")


def plot_sizes(plt):
    """Start-up, scan and overflow-recovery cost against tree size, from the package's medians."""
    import re
    results = benchmark_results()
    sizes = {label: TREE_ENTRIES[label] for label in BENCHMARK_TREES if label != "10k dirs x 10 files"}
    figure, (ready_axis, scan_axis) = plt.subplots(1, 2, figsize=(11, 4.5))

    def series(pattern):
        points = []
        for key in results:
            match = re.match(pattern, key)
            if match and match.group(1) in sizes and wall(results, key):
                points.append((sizes[match.group(1)], wall(results, key) / 1e3))
        return sorted(points)

    for backend in ["inotify", "inotifytools", "polling"]:
        points = series(r"ready: (.*) \(" + backend + r"\)$")
        if points:
            ready_axis.plot(*zip(*points), marker="o", label=f"ready ({backend})")
    points = series(r"scan\+diff: (.*) \(polling\)$")
    if points:
        scan_axis.plot(*zip(*points), marker="o", label="polling: scan + diff")
    for backend in ["inotify", "inotifytools"]:
        points = series(r"overflow rescan: (.*) \(" + backend + r"\)$")
        if points:
            scan_axis.plot(*zip(*points), marker="s", linestyle="--", label=f"overflow recovery ({backend})")
    for axis, title in [(ready_axis, "time to ready (p50)"), (scan_axis, "polling cycle and overflow recovery (p50)")]:
        label_axis(axis, "entries in the tree", "ms (log)", title)
    save_figure(figure, "size-costs.png")


if __name__ == "__main__":
    main()
