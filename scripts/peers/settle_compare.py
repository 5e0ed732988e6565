#!/usr/bin/env python3
"""Side-by-side comparison of *settling*: knowing when a file has finished being written.

Runs, in one run on the same workloads: filewatch `--settle` (inotify and polling backends,
quiet period Q, plus inotify at 0.05 s), chokidar with `awaitWriteFinish` (stabilityThreshold Q,
pollInterval 100 ms) and watchman subscriptions with `settle` = Q in the root's .watchmanconfig.
Workloads: a writer that pauses longer than Q with the file open, a fast 200 MiB `cp`, and a
`tar -xf` of 1,000 small files. Each tool runs alone, on a fresh directory per workload. Every
timestamp is taken in this process with time.monotonic(): the writer's (it writes from here, or
times the `cp`/`tar` it runs) and each report's (as the line is read from the tool's output).
Writes docs/settling-comparison.md.

Invoked by scripts/compare-settle.sh, which installs the peers and builds filewatch first.
Plain Python 3 standard library.
"""
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FILEWATCH = os.environ["FILEWATCH_BIN"]
OUTPUT = os.environ.get("SETTLE_OUTPUT", os.path.join(ROOT, "docs", "settling-comparison.md"))
COMMAND = os.environ.get("COMPARE_COMMAND", "scripts/compare-settle.sh")
Q = float(os.environ.get("SETTLE_QUIET", "2"))               # the quiet period, seconds, for every tool
FAST_Q = 0.05                                                # filewatch inotify's close-based row
POLL = 0.1                                                   # chokidar's pollInterval and filewatch polling's interval
NODE_PATH = os.environ.get("NODE_PATH", "/usr/share/nodejs")
CHOKIDAR_ADAPTER = os.path.join(HERE, "chokidar_settle.js")

MIB = 1024 * 1024
PAUSED_RUNS, PAUSED_CHUNK, PAUSE = 3, 1 * MIB, 3.0
COPY_RUNS, COPY_SIZE = 5, 200 * MIB
BURST_DIRS, BURST_FILES_PER_DIR, BURST_FILE_SIZE = 10, 100, 4096
GRACE = 10.0        # a file not reported finished within Q + GRACE after its writer finished is missed

WORK = tempfile.mkdtemp(prefix="filewatch-settle-", dir="/tmp")
SHM = tempfile.mkdtemp(prefix="filewatch-settle-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
now = time.monotonic


def log(message):
    print(f"[settle] {message}", file=sys.stderr, flush=True)


# MARK: Tools. Each runs as a child process whose stdout lines are timestamped as they are read;
# a report is (time, path, size the tool gave or None, size stat() gave as the line was read).

class Tool:
    label = ""
    setting = ""

    def __init__(self):
        self.reports, self.lock = [], threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.ready = threading.Event()
        self.process, self.stderr_tail = None, []

    def command(self, root):
        raise NotImplementedError

    def parse(self, line):
        """-> 'ready', or a list of (path, size or None) reported finished."""
        raise NotImplementedError

    def prepare(self, root):
        pass

    def request(self):
        """Bytes to send on the tool's standard input (which is then closed), or None."""
        return None

    def start(self, root):
        self.root = root
        self.reports, self.ready, self.stderr_tail = [], threading.Event(), []
        self.prepare(root)
        request = self.request()
        self.process = subprocess.Popen(self.command(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        stdin=subprocess.DEVNULL if request is None else subprocess.PIPE,
                                        start_new_session=True, env=self.environment())
        if request is not None:
            self.process.stdin.write(request)
            self.process.stdin.close()
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._drain_stderr, args=(self.process.stderr,), daemon=True).start()
        if not self.ready.wait(60):
            self.stop()
            raise RuntimeError(f"{self.label} never became ready: {' | '.join(self.stderr_tail[-5:])}")
        time.sleep(0.5)       # let start-up work (first scans, settles of what was there) pass

    def environment(self):
        return None

    def _read(self, stream):
        for raw in iter(stream.readline, b""):
            t = now()
            try:
                parsed = self.parse(raw.decode("utf-8", "surrogateescape"))
            except (ValueError, KeyError, TypeError):
                continue
            if parsed == "ready":
                self.ready.set()
                continue
            entries = []
            for path, size in parsed or []:
                try:
                    stat_size = os.stat(path).st_size
                except OSError:
                    stat_size = None
                entries.append((t, path, size, stat_size))
            if entries:
                with self.lock:
                    self.reports.extend(entries)
                    self.changed.notify_all()

    def _drain_stderr(self, stream):
        for raw in iter(stream.readline, b""):
            self.stderr_tail = (self.stderr_tail + [raw.decode("utf-8", "replace").rstrip()])[-20:]

    def wait_until(self, predicate, deadline):
        """Waits until predicate(reports) is true or the monotonic deadline passes."""
        with self.lock:
            while not predicate(self.reports):
                remaining = deadline - now()
                if remaining <= 0:
                    return False
                self.changed.wait(min(remaining, 0.5))
            return True

    def snapshot(self):
        with self.lock:
            return list(self.reports)

    def stop(self):
        if self.process and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.process = None
        self.cleanup()

    def cleanup(self):
        pass


class Filewatch(Tool):
    def __init__(self, backend, settle, poll=None):
        super().__init__()
        self.backend, self.settle, self.poll = backend, settle, poll
        self.label = f"filewatch {backend}" + (" (close-based)" if settle < 1 and backend != "polling" else "")
        self.setting = f"`--backend {backend} --settle {settle:g}" + (f" --poll-interval {poll:g}`" if poll else "`")

    def command(self, root):
        command = [FILEWATCH, "watch", root, "--backend", self.backend, "--settle", f"{self.settle:g}",
                   "--format", "json", "--only", "settled"]
        return command + (["--poll-interval", f"{self.poll:g}"] if self.poll else [])

    def parse(self, line):
        record = json.loads(line)
        if record.get("kind") == "ready":
            return "ready"
        if record.get("kind") == "settled":
            return [(record["path"], None)]
        return []


class Chokidar(Tool):
    def __init__(self):
        super().__init__()
        self.version = subprocess.run(["node", "-e", "process.stdout.write(require('chokidar/package.json').version)"],
                                      capture_output=True, text=True, env=self.environment(), timeout=30).stdout.strip()
        self.label = f"chokidar {self.version}"
        self.setting = f"`awaitWriteFinish: {{stabilityThreshold: {int(Q * 1000)}, pollInterval: {int(POLL * 1000)}}}`"

    def environment(self):
        return dict(os.environ, NODE_PATH=NODE_PATH)

    def command(self, root):
        return ["node", CHOKIDAR_ADAPTER, root, str(int(Q * 1000)), str(int(POLL * 1000))]

    def parse(self, line):
        record = json.loads(line)
        if record.get("kind") == "ready":
            return "ready"
        if record.get("kind") in ("add", "change"):
            return [(record["path"], record.get("size"))]
        return []


class Watchman(Tool):
    """A watchman server of this run's own (its socket, state, log and pid file in the temp dir),
    `settle` in each watched root's .watchmanconfig, and a subscription through the CLI
    (`watchman -j -p --server-encoding=json`, line-buffered with stdbuf so each PDU arrives as it
    is sent). Subscriptions are dispatched after the root was quiet for the settle period."""

    def __init__(self):
        super().__init__()
        self.dir = os.path.join(WORK, "watchman")
        os.makedirs(self.dir, exist_ok=True)
        self.base = ["watchman", f"--sockname={self.dir}/sock", f"--statefile={self.dir}/state",
                     f"--logfile={self.dir}/log", f"--pidfile={self.dir}/pid", "--no-save-state"]
        try:
            version = json.loads(self.call("get-sockname"))["version"]     # spawns the server
        except BaseException:
            self.shutdown()
            raise
        self.label = f"watchman {version}"
        self.setting = f'`{{"settle": {int(Q * 1000)}}}` in .watchmanconfig, `subscribe` with `["type", "f"]`'

    def call(self, *arguments, stdin=None):
        result = subprocess.run(self.base + ["--no-pretty"] + list(arguments), input=stdin, capture_output=True,
                                text=True, timeout=60)
        if result.returncode != 0 or '"error"' in result.stdout:
            raise RuntimeError(f"watchman {' '.join(arguments)}: {result.stdout.strip()} {result.stderr.strip()}")
        return result.stdout

    def prepare(self, root):
        with open(os.path.join(root, ".watchmanconfig"), "w") as config:
            json.dump({"settle": int(Q * 1000)}, config)
        self.call("watch", root)

    def request(self):
        return (json.dumps(["subscribe", self.root, "settle", {
            "expression": ["type", "f"], "fields": ["name", "size", "exists", "type"]}]) + "\n").encode()

    def command(self, root):
        stdbuf = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
        return stdbuf + self.base + ["-j", "-p", "--server-encoding=json", "--no-pretty"]

    def parse(self, line):
        record = json.loads(line)
        if "subscribe" in record and "files" not in record:
            return []
        if record.get("is_fresh_instance"):
            return "ready"          # the initial result: everything present at subscription
        root = record.get("root", self.root)
        return [(os.path.join(root, entry["name"]), entry.get("size"))
                for entry in record.get("files", []) if entry.get("exists", True)]

    def cleanup(self):
        try:
            self.call("watch-del", self.root)
        except (RuntimeError, subprocess.TimeoutExpired, AttributeError):
            pass

    def shutdown(self):
        try:
            subprocess.run(self.base + ["shutdown-server"], capture_output=True, timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            with open(os.path.join(self.dir, "pid")) as pidfile:
                pid = int(pidfile.read().strip())
        except (OSError, ValueError):
            return
        for _ in range(50):                    # the server this run started, by its pid file
            try:
                os.kill(pid, 0)
            except OSError:
                return
            time.sleep(0.1)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# MARK: Workloads. Each returns the files it wrote: (path, final size, time of the last write or
# None when not known, time the writer finished: close, or the exit of cp/tar).

def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def paused_writer(tool, root):
    files = []
    for run in range(PAUSED_RUNS):
        path = os.path.join(root, f"paused-{run}.bin")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        write_all(fd, os.urandom(PAUSED_CHUNK))
        time.sleep(PAUSE)                      # the file stays open: the writer is not done
        chunk = os.urandom(PAUSED_CHUNK)
        last_write = now()
        write_all(fd, chunk)
        os.close(fd)
        done = now()
        files.append((path, 2 * PAUSED_CHUNK, last_write, done))
        wait_finished(tool, files[-1:], done + Q + GRACE)
    return files


def fast_copy(tool, root, source):
    files = []
    for run in range(COPY_RUNS):
        path = os.path.join(root, f"copy-{run}.bin")
        subprocess.run(["cp", source, path], check=True, timeout=120)
        done = now()
        files.append((path, COPY_SIZE, None, done))
        wait_finished(tool, files[-1:], done + Q + GRACE)
    return files


def burst(tool, root, archive, names):
    subprocess.run(["tar", "-xf", archive, "-C", root], check=True, timeout=120)
    done = now()
    files = [(os.path.join(root, name), BURST_FILE_SIZE, None, done) for name in names]
    wait_finished(tool, files, done + Q + GRACE)
    return files


def is_early(report, final_size, last_write):
    t, _, tool_size, stat_size = report
    size = tool_size if tool_size is not None else stat_size
    return (last_write is not None and t < last_write) or size is None or size < final_size


def wait_finished(tool, files, deadline):
    wanted = {path: (size, last_write) for path, size, last_write, _ in files}

    def all_finished(reports):
        seen = {r[1] for r in reports if r[1] in wanted and not is_early(r, *wanted[r[1]])}
        return len(seen) == len(wanted)

    tool.wait_until(all_finished, deadline)


def evaluate(files, reports):
    by_path = {}
    for report in reports:
        by_path.setdefault(report[1], []).append(report)
    early, missed, duplicates, delays, early_details = 0, 0, 0, [], []
    for path, size, last_write, done in files:
        finals = []
        for report in by_path.get(path, []):
            if is_early(report, size, last_write):
                early += 1
                t, _, tool_size, stat_size = report
                early_details.append({
                    "file": os.path.basename(path),
                    "before_last_write_ms": None if last_write is None else round((last_write - t) * 1000),
                    "size": tool_size if tool_size is not None else stat_size, "final_size": size})
            else:
                finals.append(report)
        if not finals or finals[0][0] > done + Q + GRACE:
            missed += 1
        else:
            delays.append((finals[0][0] - done) * 1000)
        duplicates += max(0, len(finals) - 1)
    return {"files": len(files), "early": early, "missed": missed, "duplicates": duplicates,
            "delays": delays, "early_details": early_details}


def percentile(values, p):
    """Nearest rank: with fewer than 100 samples, p99 is the maximum."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


# MARK: Running

def prepare_inputs():
    source = os.path.join(SHM, "copy-source.bin")
    with open(source, "wb") as out:
        for _ in range(COPY_SIZE // MIB):
            out.write(os.urandom(MIB))
    tree = os.path.join(WORK, "burst-tree")
    names = []
    for d in range(BURST_DIRS):
        os.makedirs(os.path.join(tree, f"d{d}"))
        for f in range(BURST_FILES_PER_DIR):
            name = os.path.join(f"d{d}", f"f{f:03d}.dat")
            with open(os.path.join(tree, name), "wb") as out:
                out.write(os.urandom(BURST_FILE_SIZE))
            names.append(name)
    archive = os.path.join(SHM, "burst.tar")
    subprocess.run(["tar", "-cf", archive, "-C", tree] + [f"d{d}" for d in range(BURST_DIRS)], check=True)
    shutil.rmtree(tree)
    return source, archive, names


def tools():
    found, left_out = [Filewatch("inotify", Q), Filewatch("polling", Q, POLL)], []
    if shutil.which("node"):
        try:
            chokidar = Chokidar()
            if chokidar.version:
                found.append(chokidar)
            else:
                left_out.append(("chokidar", "node cannot load chokidar (install node-chokidar)"))
        except (OSError, subprocess.TimeoutExpired) as error:
            left_out.append(("chokidar", str(error)))
    else:
        left_out.append(("chokidar", "node is not installed"))
    if shutil.which("watchman"):
        try:
            found.append(Watchman())
        except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError) as error:
            left_out.append(("watchman", f"could not start its server: {error}"))
    else:
        left_out.append(("watchman", "not installed"))
    found.append(Filewatch("inotify", FAST_Q))
    selected = os.environ.get("SETTLE_TOOLS")
    if selected:
        found = [tool for tool in found if any(word in tool.label for word in selected.split(","))]
    return found, left_out


WORKLOADS = [
    ("paused", "Paused writer", "One process opens a file, writes 1 MiB, pauses 3 s with the file open (longer than Q), "
                                "writes 1 MiB more and closes; 3 files"),
    ("copy", "Fast copy", "`cp` of a 200 MiB file from /dev/shm into the watched directory; 5 files, one after another"),
    ("burst", "Burst", "`tar -xf` of 1,000 files of 4 KiB in 10 directories (archive on /dev/shm)"),
]


def run_all():
    source, archive, names = prepare_inputs()
    found, left_out = tools()
    results, failures = {}, []
    started = now()
    try:
        for tool in found:
            for key, _, _ in WORKLOADS:
                root = os.path.realpath(tempfile.mkdtemp(prefix=f"{key}-", dir=WORK))
                log(f"{tool.label}: {key}")
                try:
                    tool.start(root)
                    if key == "paused":
                        files = paused_writer(tool, root)
                    elif key == "copy":
                        files = fast_copy(tool, root, source)
                    else:
                        files = burst(tool, root, archive, names)
                    time.sleep(Q + 1)      # late and repeated reports
                    if tool.process.poll() is not None:
                        failures.append((tool.label, key, f"exited early with status {tool.process.returncode}: "
                                                          f"{' | '.join(tool.stderr_tail[-5:])}"))
                    results[(tool.label, key)] = evaluate(files, tool.snapshot())
                except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                    failures.append((tool.label, key, str(error)))
                    log(f"  failed: {error}")
                finally:
                    tool.stop()
                    shutil.rmtree(root, ignore_errors=True)
                r = results.get((tool.label, key))
                if r:
                    log(f"  early {r['early']}, missed {r['missed']}, duplicates {r['duplicates']}, "
                        f"delay p50 {fmt(percentile(r['delays'], 50))} ms")
    finally:
        for tool in found:
            if isinstance(tool, Watchman):
                tool.shutdown()
    return found, left_out, results, failures, now() - started


# MARK: Report

def fmt(value):
    return "–" if value is None else f"{value:.0f}"


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    fs = ""
    if shutil.which("findmnt"):
        fs = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", "/tmp"], capture_output=True, text=True).stdout.strip()
    fs = fs or subprocess.run(["stat", "-f", "-c", "%T", "/tmp"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip() if shutil.which("node") else "–"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), "
                   f"/tmp on {fs or 'unknown'}",
        "filewatch": f"{commit}{' (uncommitted changes)' if dirty else ''}, release build",
        "node": node, "python": platform.python_version(),
    }


def observations(found, results):
    def labels(names):
        return ", ".join(names) if names else "none"

    out = []
    paused = {tool.label: results[(tool.label, "paused")] for tool in found if (tool.label, "paused") in results}
    if paused:
        early = [label for label, r in paused.items() if r["early"]]
        clean = [label for label, r in paused.items() if not r["early"]]
        out.append(f"- Paused writer (a {PAUSE:g} s pause with the file open, longer than Q): reported early by "
                   f"{labels(early)}; never early: {labels(clean)}. A report during the pause means a consumer "
                   "would open a half-written file.")
    for key, what in (("copy", "fast copy"), ("burst", "burst")):
        rows = {tool.label: results[(tool.label, key)] for tool in found if (tool.label, key) in results}
        for kind in ("early", "missed", "duplicates"):
            bad = [f"{label} ({r[kind]})" for label, r in rows.items() if r[kind]]
            if bad:
                out.append(f"- {what.capitalize()}: {kind} reports from {labels(bad)}." if kind != "missed"
                           else f"- {what.capitalize()}: files missed by {labels(bad)}.")
        medians = sorted((percentile(r["delays"], 50), label) for label, r in rows.items() if r["delays"])
        if medians:
            out.append(f"- {what.capitalize()}, median delay from the writer's exit: " +
                       "; ".join(f"{label} {fmt(value)} ms" for value, label in medians) + ".")
    if any(isinstance(tool, Watchman) for tool in found):
        out.append("- From watchman's documentation rather than this run: `settle` applies to the whole root (a "
                   "subscription result is sent once nothing under the root changed for the period), so changes "
                   "to other files delay every report.")
    return out


def write_report(found, left_out, results, failures, elapsed):
    info = machine_info()
    lines = [
        "# Settling: knowing when a file has finished being written",
        "",
        "Generated by:",
        "",
        "```sh",
        COMMAND,
        "```",
        "",
        f"- Date: {info['date']}; total run time {elapsed:.0f} s",
        f"- Machine: {info['machine']}",
        f"- filewatch: {info['filewatch']}; node {info['node']}; Python {info['python']}",
        "",
        "Do not edit by hand: run the command again. The script installs `node-chokidar` and `watchman` from",
        "Debian when root, builds filewatch in release and runs `scripts/peers/settle_compare.py`.",
        "",
        "## Tools and settings",
        "",
        f"The same quiet period Q = {Q:g} s for every tool in the main comparison (chokidar's default",
        f"stabilityThreshold), and filewatch's inotify backend once more at `--settle {FAST_Q:g}` to show what a",
        "decision based on the writer's close allows. Each tool runs alone, on a fresh directory per workload.",
        "",
        "| tool | setting | \"finished\" is |",
        "|---|---|---|",
    ]
    meaning = {
        Filewatch: lambda t: ("a `settled` line" + (" (closed by its writer, then no write for the quiet period)"
                                                      if t.backend != "polling" else
                                                      " (size, mtime and ctime unchanged for the quiet period)")),
        Chokidar: lambda t: "an `add` or `change` event (emitted once the size stayed unchanged for the threshold)",
        Watchman: lambda t: "the file in a subscription result (sent once the whole root was quiet for `settle`)",
    }
    for tool in found:
        lines.append(f"| {tool.label} | {tool.setting} | {meaning[type(tool)](tool)} |")
    for name, reason in left_out:
        lines.append(f"| {name} | left out: {reason} | |")
    lines += [
        "",
        "## How it is measured",
        "",
        "All times are `time.monotonic()` in the measuring Python process: a report's time is when its line",
        "was read from the tool's standard output, and the writer's times are taken in the same process (it",
        "writes the paused files itself, and times the `cp` and `tar` it runs). The size \"at report\" is the size",
        "the tool gave (chokidar's stats, watchman's `size` field) or else `stat()` of the file as the line was",
        "read (filewatch's lines carry no size).",
        "",
        "- **Early report**: a report for a file before its last write started, or with a size below the",
        "  final one. Acting on it means reading a file that is still being written.",
        f"- **Missed**: no report that is not early within Q + {GRACE:g} s after the writer finished (close, or",
        "  the exit of `cp`/`tar`).",
        "- **Duplicates**: further reports after the first report that is not early (early reports are counted",
        "  as early only).",
        "- **Delay**: from the writer finishing (the paused writer's close, `cp`'s or `tar`'s exit) to the first",
        "  report that is not early. A tool whose quiet period starts at the file's close or last change can",
        "  report less than Q after `cp`/`tar` exits, and even before (a negative delay): each file is",
        "  closed before the process exits, and in a burst the first files are complete long before `tar`",
        "  exits. p99 is by nearest rank, so with fewer than 100 samples it is the maximum.",
        "",
        "## Results",
        "",
    ]
    for key, title, description in WORKLOADS:
        lines += [f"### {title}", "", description + ".", "",
                  "| tool | files | early reports | missed | duplicates | delay p50 (ms) | delay p99 (ms) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for tool in found:
            r = results.get((tool.label, key))
            if r is None:
                lines.append(f"| {tool.label} | failed | | | | | |")
                continue
            lines.append(f"| {tool.label} | {r['files']} | {r['early']} | {r['missed']} | {r['duplicates']} | "
                         f"{fmt(percentile(r['delays'], 50))} | {fmt(percentile(r['delays'], 99))} |")
        lines.append("")
        details = [(tool.label, d) for tool in found for d in results.get((tool.label, key), {}).get("early_details", [])]
        if details:
            lines += ["Early reports, each:", "",
                      "| tool | file | before the last write (ms) | size at report | final size |",
                      "|---|---|---:|---:|---:|"]
            shown = details[:20]
            for label, d in shown:
                before = "–" if d["before_last_write_ms"] is None else str(d["before_last_write_ms"])
                lines.append(f"| {label} | {d['file']} | {before} | {d['size']} | {d['final_size']} |")
            if len(details) > len(shown):
                lines.append(f"| … {len(details) - len(shown)} more | | | | |")
            lines.append("")
    if failures:
        lines += ["## Failures", ""]
        lines += [f"- {label}, {key}: {error}" for label, key, error in failures]
        lines.append("")
    lines += ["## Reading the results", "", "Statements computed from the tables above:", ""]
    lines += observations(found, results)
    lines.append("")
    with open(OUTPUT, "w") as out:
        out.write("\n".join(lines))


def main():
    # On SIGTERM/SIGHUP, unwind through the finally blocks: children stopped, watchman shut down,
    # temporary directories removed.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda number, frame: sys.exit(128 + number))
    try:
        found, left_out, results, failures, elapsed = run_all()
        write_report(found, left_out, results, failures, elapsed)
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
        shutil.rmtree(SHM, ignore_errors=True)
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)}")


if __name__ == "__main__":
    main()
