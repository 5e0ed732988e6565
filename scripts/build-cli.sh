#!/usr/bin/env bash
# The deployment build of the filewatch CLI (README: "Building the CLI for deployment"), the
# one scripts/compare-peers.sh measures. Prints the binary's path on its last line.
#
#   scripts/build-cli.sh                 # with the InotifyTools trait when libinotifytools is installed
#   scripts/build-cli.sh --no-traits     # without it
#
# It differs from a plain `swift build -c release --static-swift-stdlib` only in how the
# binary is laid out, which is what its resident memory is made of (on an empty directory,
# 13.6 MiB against 1.7 for inotifywait, 9.4 MiB of it this binary's own code pages):
#
# - each function in a section of its own (-function-sections), so that the linker can
#   place them, and lld in place of gold, which reads scripts/cli-symbol-order.txt: the
#   functions a watch runs (recorded by scripts/record-cli-symbol-order.sh) are packed
#   together, where they were spread over the binary's 11 MB of code, most of whose pages the
#   kernel then mapped (it maps 64 KiB around every page a process touches);
# - no dynamic symbol table of everything (--no-export-dynamic; the Swift runtime finds its
#   metadata through its own sections, not through dynamic symbols), which the loader read at
#   start-up: 600 KiB;
# - relative relocations packed (-z pack-relative-relocs, DT_RELR): the loader read 1 MB of
#   them. Only where the build machine's glibc is 2.36 or later, since the binary then needs
#   that on the machine it runs on; elsewhere they are left as they were;
# - libstdc++ (which the Swift runtime uses) linked in: the parts it uses, laid out with the
#   rest, instead of the mapped shared library's 900 KiB;
# - glibc linked in as well (-static-executable), for the same reason: a watch of an empty
#   directory, 8.3 MiB resident linked to the shared libc, libm and loader, is 6.5 MiB as one
#   static executable with glibc's functions in the recorded order, and the binary runs on
#   any x86-64 Linux with nothing installed.
set -euo pipefail
cd "$(dirname "$0")/.."

traits=()
if [ "${1:-}" != "--no-traits" ] && scripts/install-test-dependencies.sh --has-inotifytools; then
    traits=(--traits InotifyTools)
fi

# A build directory of its own: SwiftPM does not rebuild what it built with other compiler
# flags, so in .build these objects would be whichever flags built them first.
scratch=.build/deployment
work=$scratch/link
mkdir -p "$work"
# The Swift toolchain's static link names -lstdc++ itself; a linker script of that name, found
# first on the library path, makes that the static archive.
libstdcxx=$(g++ -print-file-name=libstdc++.a 2>/dev/null || true)
[ -f "$libstdcxx" ] || libstdcxx=$(ls /usr/lib/gcc/*/*/libstdc++.a 2>/dev/null | sort -V | tail -1)
if [ -f "$libstdcxx" ]; then
    echo "INPUT($libstdcxx)" >"$work/libstdc++.so"
else
    rm -f "$work/libstdc++.so"
    echo "note: libstdc++.a not found (Debian: libstdc++-12-dev); linking the shared libstdc++" >&2
fi

flags=(-c release --product filewatch --static-swift-stdlib --scratch-path "$scratch"
    -Xswiftc -Xfrontend -Xswiftc -function-sections
    -Xswiftc -use-ld=lld
    -Xswiftc -L -Xswiftc "$PWD/$work"
    -Xlinker --no-export-dynamic)
if [ -f scripts/cli-symbol-order.txt ]; then
    flags+=(-Xlinker "--symbol-ordering-file=$PWD/scripts/cli-symbol-order.txt" -Xlinker --no-warn-symbol-ordering)
fi
# A static executable where the C libraries' archives are installed (Debian: libc6-dev, and
# libinotifytools0-dev with the trait): glibc's code is then laid out with the rest, of which
# a watch maps what it runs, where the shared libc, libm and loader mapped 2.2 MiB of their
# own; the binary runs on any x86-64 Linux (kernel 3.2 or later) with nothing installed. The
# package calls none of the glibc functions a static link cannot serve (NSS: getpwnam,
# getaddrinfo), and the link would warn if it did. Without the archives, the dynamic link.
archive() { local found; found=$(gcc -print-file-name="$1" 2>/dev/null || true); [ "$found" != "$1" ] && [ -f "$found" ]; }
static=0
if archive libc.a && { [ ${#traits[@]} = 0 ] || archive libinotifytools.a; }; then
    static=1
    flags+=(-Xswiftc -static-executable)
else
    echo "note: libc.a (or libinotifytools.a) not found; linking glibc dynamically" >&2
fi
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ "$static" = 0 ] && [ -n "$glibc" ] && [ "$(printf '%s\n' 2.36 "$glibc" | sort -V | head -1)" = 2.36 ]; then
    flags+=(-Xlinker -z -Xlinker pack-relative-relocs)
fi

binary="$(swift build "${flags[@]}" "${traits[@]}" --show-bin-path)/filewatch"
# The order file is not an input SwiftPM tracks: link again every time.
rm -f "$binary"
swift build "${flags[@]}" "${traits[@]}" >&2
echo "$binary"
