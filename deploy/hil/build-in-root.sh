#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds the release shutterd and shutterctl of this working tree inside ROOT (the harness's
# trixie root: Swift 6.0.3, libcamera 0.7.1) and prints the folder that holds them, as a path
# inside ROOT. The tree is bound read-only at /src; the build goes to /build/hil-<hash of the
# tree's path> inside ROOT, so a second run is incremental and two clones do not share one.
# Everything runs in a private mount namespace (nothing stays mounted), under a bound that
# names the step when it hangs. Root only. Usage: build-in-root.sh ROOT
# A root of another architecture (the arm64 root, under qemu-user: a cold release build there
# takes ~55 min on 2 shared cores) gets a bound of 2 h instead of 1 h.
set -eu
root=${1:?ROOT}
repo=$(cd "$(dirname "$0")/../.." && pwd)
key=$(printf '%s' "$repo" | sha256sum | cut -c1-12)
scratch=/build/hil-$key
mkdir -p "$root$scratch" "$root/src"
log="$root$scratch/build.log"
# One build per tree at a time (a second make hil waits for the first).
exec 9>"$root$scratch/.lock"
flock 9
rc=0
unshare --mount --propagation private sh -eu -s "$root" "$repo" "$scratch" > "$log" 2>&1 <<'INNER' || rc=$?
root=$1; repo=$2; scratch=$3
mount --bind /proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind "$repo" "$root/src"
mount -o remount,bind,ro "$root/src"
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
SW="swift build --package-path /src --scratch-path $scratch -c release"
bound=3600
[ "$(chroot "$root" uname -m)" = "$(uname -m)" ] || bound=7200
timeout --kill-after=30 $bound nice -n 10 chroot "$root" $E sh -c "$SW --product shutterd && $SW --product shutterctl" || {
    rc=$?; [ "$rc" = 124 ] && echo "build-in-root: TIMEOUT after $bound s: swift build -c release in $root"; exit "$rc"; }
INNER
if [ "$rc" != 0 ]; then
    tail -20 "$log" >&2
    echo "build-in-root: FAIL swift build -c release in $root (exit $rc, log $log)" >&2
    exit 1
fi
# Warnings fail the build as they do on the host (Swift 6.0.3 may see what 6.x does not).
if grep -E '(warning|error):' "$log" | grep -v '^warning: .*unhandled' >&2; then
    echo "build-in-root: FAIL warnings in the release build (log $log)" >&2; exit 1
fi
echo "$scratch/release"
