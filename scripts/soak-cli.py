#!/usr/bin/env python3
"""An opt-in soak of the built `filewatch` CLI: seeded random workloads at full speed, checked
by the replay invariant (docs/cli-json.md, "Applying events").

Each run starts `filewatch watch ROOT --format json --backend B` on a small tree, waits for
`ready`, records the tree, and lets one or more writer processes loose on it with no pause:
files made, written and saved atomically over others, `mkdir -p` chains (some 30 levels deep),
renames of files and of directories across levels, directories moved out of the tree and
trees moved in, `rm -rf`, symlinks, hard links, `renameat2` exchanges of files and directories,
a directory renamed onto an empty one. On odd seeds the reader of the watcher's pipe stalls
while the writers run, so the watcher blocks on a full pipe and the kernel queue fills behind
it. Then a marker file is made; once the watcher reports it, the events before it are applied
to the tree at `ready` and must give exactly the tree on disk, every path with its type.

    scripts/soak-cli.py                               # every backend, seeds 1-20, one writer
    scripts/soak-cli.py --writers 3 --seeds 100:140   # three writers at once
    scripts/soak-cli.py --small-queue 128             # root: fs.inotify.max_queued_events=128
                                                      # for the run (restored after): overflows
    scripts/soak-cli.py --extra="--stable-ids"        # any watch options
    su nobody -s /bin/sh -c 'scripts/soak-cli.py --work /tmp/soak-nobody'

The binary is `scripts/build-cli.sh`'s (built if missing) unless `--binary` names another.
A failing run keeps its tree and the watcher's output under `--work` and the script exits 1.
It is not part of `scripts/test.sh`: the conformance suite runs the same kinds of workload
in-process on every backend; this one drives the CLI and its JSON Lines as a script would.
"""
import argparse
import ctypes
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUEUE_SYSCTL = "/proc/sys/fs/inotify/max_queued_events"
LIBC = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_EXCHANGE = 2


def exchange(a, b):
    return LIBC.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) == 0


def item_type(path):
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def disk(root):
    """Every path below `root` (relative) with its type; the marker left out."""
    found = {}
    for directory, directories, files in os.walk(root):
        for name in directories + files:
            path = os.path.join(directory, name)
            try:
                found[os.path.relpath(path, root)] = item_type(path)
            except FileNotFoundError:
                pass
    return {path: kind for path, kind in found.items() if path != ".marker"}


def below(tree, relative):
    return [path for path in tree if path == relative or path.startswith(relative + "/")]


def replay(initial, records, root):
    """Applies the records to the tree at `ready`, as docs/cli-json.md says a consumer does."""
    tree = dict(initial)
    prefix = root + "/"

    def relative(path):
        return path[len(prefix):] if path.startswith(prefix) else None

    for record in records:
        kind, path = record["kind"], relative(record.get("path", ""))
        if path is None:
            continue
        if kind == "created":
            for gone in below(tree, path):
                del tree[gone]
            tree[path] = record["type"]
        elif kind == "removed":
            for gone in below(tree, path):
                del tree[gone]
        elif kind in ("renamed", "exchanged"):
            previous = relative(record.get("previousPath", ""))
            if previous is None:
                continue
            moved = {p: tree.pop(p) for p in below(tree, previous)}
            other = {p: tree.pop(p) for p in below(tree, path)}
            for p, value in moved.items():
                tree[path + p[len(previous):]] = value
            if kind == "exchanged":
                for p, value in other.items():
                    tree[previous + p[len(path):]] = value
    tree.pop(".marker", None)
    return tree


class Watcher:
    """The CLI with its stdout read on a thread that can be made to stall."""

    def __init__(self, command):
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.records, self.raw = [], []
        self.stalled = threading.Event()
        self.changed = threading.Condition()
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            while self.stalled.is_set():
                time.sleep(0.01)
            with self.changed:
                self.raw.append(line)
                self.records.append(json.loads(line))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr += line

    def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        with self.changed:
            while not any(predicate(record) for record in self.records):
                if time.monotonic() > deadline or self.process.poll() is not None:
                    return False
                self.changed.wait(0.2)
        return True

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def write(root, outside, rng, count, tag):
    """`count` seeded operations with no pause. The writer keeps its own idea of the tree (it
    never walks it, which would pace it); with other writers at work that idea goes stale, and
    an operation that then fails is skipped."""
    directories, files = [""], []

    def full(relative):
        return os.path.join(root, relative) if relative else root

    def moved(paths, source, target):
        return [target + p[len(source):] if p == source or p.startswith(source + "/") else p for p in paths]

    def dropped(paths, source):
        return [p for p in paths if not (p == source or p.startswith(source + "/"))]

    for step in range(count):
        choice = rng.randrange(16)
        directory = rng.choice(directories)
        name = os.path.join(directory, f"{tag}-{step}")
        try:
            if choice <= 2:
                with open(full(name), "w") as file:
                    file.write("x" * rng.randrange(3))
                files.append(name)
            elif choice == 3:
                os.makedirs(full(os.path.join(name, "a", "b")))
                open(full(os.path.join(name, "a", "b", "leaf")), "w").close()
                directories += [name, os.path.join(name, "a"), os.path.join(name, "a", "b")]
                files.append(os.path.join(name, "a", "b", "leaf"))
            elif choice == 4 and files:
                source = rng.choice(files)
                os.rename(full(source), full(name))
                files = moved(files, source, name)
            elif choice == 5 and len(directories) > 1:
                source = rng.choice(directories[1:])
                targets = dropped(directories, source)
                target = os.path.join(rng.choice(targets), f"{tag}-{step}")
                os.rename(full(source), full(target))
                directories, files = moved(directories, source, target), moved(files, source, target)
            elif choice == 6 and len(directories) > 1:
                source = rng.choice(directories[1:])
                os.rename(full(source), os.path.join(outside, f"{tag}-{step}"))
                directories, files = dropped(directories, source), dropped(files, source)
            elif choice == 7:
                staging = os.path.join(outside, f"{tag}-{step}")
                os.makedirs(os.path.join(staging, "x", "y"))
                open(os.path.join(staging, "x", "y", "z"), "w").close()
                os.rename(staging, full(name))
                directories += [name, os.path.join(name, "x"), os.path.join(name, "x", "y")]
                files.append(os.path.join(name, "x", "y", "z"))
            elif choice == 8 and files:
                source = rng.choice(files)
                os.remove(full(source))
                files.remove(source)
            elif choice == 9 and len(directories) > 1:
                source = rng.choice(directories[1:])
                shutil.rmtree(full(source))
                directories, files = dropped(directories, source), dropped(files, source)
            elif choice == 10 and files:
                # An atomic save: a temporary file renamed over the saved one.
                saved = rng.choice(files)
                with open(full(saved + ".tmp"), "w") as file:
                    file.write("saved")
                os.rename(full(saved + ".tmp"), full(saved))
            elif choice == 11:
                os.symlink(rng.choice(["nowhere", ".", ".."]), full(name))
                files.append(name)
            elif choice == 12 and files:
                source = rng.choice(files)
                os.link(full(source), full(name), follow_symlinks=False)
                files.append(name)
            elif choice == 13 and len(directories) > 2:
                # A directory renamed onto an empty one.
                source = rng.choice(directories[1:])
                targets = [d for d in dropped(directories, source) if not source.startswith(d + "/")]
                target = os.path.join(rng.choice(targets), f"{tag}-{step}")
                os.mkdir(full(target))
                os.rename(full(source), full(target))
                directories, files = moved(directories, source, target), moved(files, source, target)
            elif choice == 14 and len(files) + len(directories) > 3:
                a, b = rng.choice(files + directories[1:]), rng.choice(files + directories[1:])
                if a != b and not a.startswith(b + "/") and not b.startswith(a + "/") and exchange(full(a), full(b)):
                    swap = {a: b, b: a}

                    def swapped(path):
                        for one, other in swap.items():
                            if path == one or path.startswith(one + "/"):
                                return other + path[len(one):]
                        return path
                    directories, files = [swapped(p) for p in directories], [swapped(p) for p in files]
            elif choice == 15:
                chain = os.path.join(name, *["n"] * 30)
                os.makedirs(full(chain))
                open(full(os.path.join(chain, "bottom")), "w").close()
                directories.append(name)
        except OSError:
            pass


def run(binary, backend, seed, arguments, work):
    base = os.path.join(work, f"{backend}-{seed}")
    shutil.rmtree(base, ignore_errors=True)
    root, outside = os.path.join(base, "root"), os.path.join(base, "outside")
    os.makedirs(root)
    os.makedirs(outside)
    for index in range(5):
        os.makedirs(os.path.join(root, f"d{index}", "s"))
        open(os.path.join(root, f"d{index}", "s", "f"), "w").close()
    watcher = Watcher([binary, "watch", root, "--format", "json", "--backend", backend] + arguments.extra.split())
    if not watcher.wait_for(lambda r: r["kind"] == "ready", 120):
        watcher.stop()
        return False, f"no ready: {watcher.stderr.decode(errors='replace').strip()}"
    initial = disk(root)
    stalls = arguments.stall > 0 and seed % 2 == 1
    if stalls:
        watcher.stalled.set()
    # Writers are processes of their own, started together: each one's operations race the
    # others' and the watcher's reads.
    writers = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--write", root, outside,
                                 str(seed * 1000 + index), str(arguments.ops), f"w{index}"])
               for index in range(arguments.writers)]
    for writer in writers:
        writer.wait()
    if stalls:
        time.sleep(arguments.stall)  # the watcher blocked on its pipe meanwhile
        watcher.stalled.clear()
    open(os.path.join(root, ".marker"), "w").close()
    told = watcher.wait_for(lambda r: r.get("path", "").endswith("/.marker"), 300)
    watcher.stop()
    expected, replayed = disk(root), replay(initial, watcher.records, root)
    missing = sorted(p for p, kind in expected.items() if replayed.get(p) != kind)
    extra = sorted(p for p, kind in replayed.items() if expected.get(p) != kind)
    overflows = sum(1 for r in watcher.records if r["kind"] == "overflow")
    summary = f"{len(watcher.records)} records, {overflows} overflows{', stalled' if stalls else ''}"
    if told and not missing and not extra:
        shutil.rmtree(base, ignore_errors=True)
        return True, summary
    with open(os.path.join(base, "watcher.jsonl"), "wb") as output:
        output.writelines(watcher.raw)
    problem = "marker never reported" if not told else f"missing or wrong {missing[:5]}, extra {extra[:5]}"
    return False, f"{summary}; {problem}; stderr: {watcher.stderr.decode(errors='replace').strip()[-300:]}; kept in {base}"


def main():
    if len(sys.argv) == 7 and sys.argv[1] == "--write":
        _, _, root, outside, seed, count, tag = sys.argv
        write(root, outside, random.Random(int(seed)), int(count), tag)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="the filewatch executable (default: scripts/build-cli.sh's)")
    parser.add_argument("--backends", default="inotify,inotifytools,polling")
    parser.add_argument("--seeds", default="1:21", help="FIRST:END, END excluded")
    parser.add_argument("--ops", type=int, default=500, help="operations per writer")
    parser.add_argument("--writers", type=int, default=1)
    parser.add_argument("--stall", type=float, default=2.0, help="seconds the reader stalls on odd seeds (0: never)")
    parser.add_argument("--small-queue", type=int, help="set fs.inotify.max_queued_events for the run (root)")
    parser.add_argument("--extra", default="", help="more `filewatch watch` options")
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "filewatch-soak"))
    arguments = parser.parse_args()
    binary = arguments.binary
    if not binary:
        binary = subprocess.run([os.path.join(ROOT, "scripts", "build-cli.sh")], check=True,
                                capture_output=True, text=True).stdout.strip()
    listing = subprocess.run([binary, "backends"], capture_output=True, text=True).stdout
    available = {fields[0] for fields in (line.split() for line in listing.splitlines()) if fields[1:2] == ["available"]}
    first, end = (int(part) for part in arguments.seeds.split(":"))
    saved_queue = None
    if arguments.small_queue:
        with open(QUEUE_SYSCTL) as current:
            saved_queue = current.read().strip()
        with open(QUEUE_SYSCTL, "w") as setting:
            setting.write(str(arguments.small_queue))
    failures = 0
    try:
        for seed in range(first, end):
            for backend in arguments.backends.split(","):
                if backend not in available:
                    print(f"skip {backend}: not available in this build", flush=True)
                    continue
                ok, detail = run(binary, backend, seed, arguments, arguments.work)
                failures += 0 if ok else 1
                print(f"{'ok  ' if ok else 'FAIL'} {backend} seed {seed}: {detail}", flush=True)
    finally:
        if saved_queue is not None:
            with open(QUEUE_SYSCTL, "w") as setting:
                setting.write(saved_queue)
    print(f"{failures} failed", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
