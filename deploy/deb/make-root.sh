#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds (or reuses) a clean Debian minbase root to install the package into, and prints
# its path: `make-root.sh SUITE ARCH` (bookworm amd64; trixie arm64 runs under qemu-user,
# see deploy/arm64/run.sh). Nothing but debootstrap's minbase and apt's lists: the test
# copies it and lets `apt install ./shutter_*.deb` pull the package's Depends. Cached under
# $DEB_ROOT_CACHE/<suite>-<arch>/ (a few hundred MB). Root only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
suite=$1
arch=$2
cache=${DEB_ROOT_CACHE:-/var/cache/shutter-deb}
RECIPE=1
out="$cache/$suite-$arch-r$RECIPE"
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
mkdir -p "$cache"
exec 9>"$out.lock"
flock 9
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
archive=$(sh "$here/../apt-archive-uri.sh")
tmp="$out.tmp"
rm -rf "$tmp"
start=$(date +%s)
echo "deb: building a clean $suite $arch minbase root in $tmp from $archive" >&2
# A bound so a hung mirror or qemu-user fails naming the step.
timeout --kill-after=30 2400 nice -n 10 debootstrap --arch="$arch" --variant=minbase "$suite" "$tmp" "$archive" \
    > "$out.log" 2>&1 || { tail -20 "$out.log" >&2; echo "deb: FAIL debootstrap $suite $arch (log $out.log)" >&2; exit 1; }
echo 'Acquire::Languages "none";' > "$tmp/etc/apt/apt.conf.d/99shutter-nolang"
echo "$(( $(date +%s) - start ))" > "$tmp/.build-seconds"
touch "$tmp/.complete"
rm -rf "$out" && mv "$tmp" "$out"
echo "deb: root built in $(cat "$out/.build-seconds") s" >&2
echo "$out"
