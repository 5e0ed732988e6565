#!/usr/bin/env python3
"""Where a running process's resident pages of its own executable are, section by section.

    scripts/peers/resident-pages.py PID            # every section with resident pages
    scripts/peers/resident-pages.py PID .text      # and that section's 64 KiB windows

Reads /proc/PID/maps and /proc/PID/pagemap (root, or the process's owner with
CAP_SYS_ADMIN, to see present bits) and the executable's section headers (`readelf`).
VmRSS counts every page mapped into the process, and a page fault on a file mapping maps
the pages around it too (the kernel's fault-around, 64 KiB by default), whether or not they
are ever used. So the second form counts the 64 KiB windows a section touches, and how many
of them are mapped whole: a window mapped whole by one fault is resident memory that no code
layout change below the window's size can give back.
"""
import collections
import os
import struct
import subprocess
import sys

PAGE = 4096
WINDOW = 65536


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    pid = int(sys.argv[1])
    binary = os.readlink(f"/proc/{pid}/exe")
    mappings = []
    for line in open(f"/proc/{pid}/maps"):
        parts = line.split()
        if len(parts) >= 6 and parts[5] == binary:
            start, end = (int(x, 16) for x in parts[0].split("-"))
            mappings.append((start, end, int(parts[2], 16)))
    if not mappings:
        sys.exit(f"no mapping of {binary} in process {pid}")
    # Where the sections' addresses are: as linked for a position-dependent executable
    # (ET_EXEC, such as the static deployment build), relative to the load address otherwise.
    header = subprocess.run(["readelf", "-hW", binary], capture_output=True, text=True, check=True).stdout
    bias = 0 if "EXEC (Executable file)" in header else min(start - offset for start, _, offset in mappings)
    present = []
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end, _ in mappings:
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read((end - start) // PAGE * 8)
            for index in range((end - start) // PAGE):
                if struct.unpack_from("<Q", entries, index * 8)[0] >> 63:
                    present.append(start + index * PAGE - bias)
    sections = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 6 and fields[0].startswith("["):
            try:
                address, size = int(fields[3], 16), int(fields[5], 16)
            except ValueError:
                continue
            if address and size:
                sections.append((address, size, fields[1]))
    per_section = collections.defaultdict(list)
    for page in present:
        name = next((n for a, s, n in sections if a < page + PAGE and page < a + s), "(between sections)")
        per_section[name].append(page)
    print(f"{binary}: {len(present) * PAGE // 1024} KiB resident")
    for name, pages in sorted(per_section.items(), key=lambda item: -len(item[1])):
        print(f"{len(pages) * PAGE // 1024:8d} KiB  {name}")
    if len(sys.argv) > 2:
        pages = per_section.get(sys.argv[2], [])
        windows = collections.Counter(page // WINDOW for page in pages)
        whole = sum(1 for count in windows.values() if count == WINDOW // PAGE)
        print(f"{sys.argv[2]}: {len(pages)} pages in {len(windows)} windows of 64 KiB, {whole} of them resident whole")


if __name__ == "__main__":
    main()
