#!/usr/bin/env bash
# Installs what the test suite needs beyond the Swift toolchain, from Debian's packages:
# libinotifytools0-dev for the (GPL-2, opt-in) libinotifytools backend.
#
#   scripts/install-test-dependencies.sh                     # install what is missing (as root)
#   scripts/install-test-dependencies.sh --has-inotifytools  # exit 0 if the C library is usable
set -euo pipefail

has_inotifytools() {
    [ -f /usr/include/inotifytools/inotifytools.h ] && ls /usr/lib/*/libinotifytools.so >/dev/null 2>&1
}

if [ "${1:-}" = "--has-inotifytools" ]; then
    has_inotifytools
    exit $?
fi

if ! has_inotifytools; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "==> installing libinotifytools0-dev (for the InotifyTools trait's backend)"
        apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libinotifytools0-dev >/dev/null 2>&1 \
            || echo "warning: could not install libinotifytools0-dev; testing without the inotifytools backend" >&2
    else
        echo "note: libinotifytools0-dev is not installed and cannot be installed here; testing without the inotifytools backend" >&2
    fi
fi
