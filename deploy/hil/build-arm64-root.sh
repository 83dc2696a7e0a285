#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds (or reuses) make hil-arm64's root and prints it as an overlay lowerdir string (the
# layer first, the base last): make arm64's cached Debian trixie arm64 root
# (deploy/arm64/build-root.sh: Swift 6.0.3, libcamera 0.7.1 from trixie-backports, libgpiod
# 2, FFmpeg 7; left untouched underneath) plus one overlay layer with what the VM runs beside
# shutterd, the arm64 builds of what the x86_64 roots take from this machine: busybox, udev,
# cam and the vimc IPA, gpiod's tools (libgpiod 2's command line), alsa-utils, socat.
# The layer is an overlayfs upper directory under $HIL_CACHE/arm64-layer-<hash>/ (<hash>:
# the base, the packages, RECIPE); mounts live in a private mount namespace only; apt runs
# under qemu-user (deploy/arm64/binfmt.sh). Root only. Cold: the base ~27 min when make
# arm64 never ran, the layer a few minutes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${HIL_CACHE:-/var/cache/shutter-hil}
RECIPE=1
PKGS="busybox-static udev gpiod alsa-utils socat libcamera-tools/trixie-backports libcamera-v4l2/trixie-backports libcamera-ipa/trixie-backports"
sh "$here/../arm64/install-deps.sh"
sh "$here/../arm64/binfmt.sh"
base=$(sh "$here/../arm64/build-root.sh")
hash=$(printf 'recipe %s\nbase %s\n%s\n' "$RECIPE" "$(basename "$base")" "$PKGS" | sha256sum | cut -c1-16)
dir=$cache/arm64-layer-$hash
lowers="$dir/upper:$base"
if [ -f "$dir/.complete" ]; then echo "$lowers"; exit 0; fi
mkdir -p "$cache"
exec 9>"$cache/.lock-arm64-layer-$hash"
flock 9
if [ -f "$dir/.complete" ]; then echo "$lowers"; exit 0; fi
if grep -q " $dir/" /proc/self/mountinfo; then
    echo "hil-arm64: FAIL something is mounted under $dir: unmount it first" >&2; exit 1
fi
rm -rf "$dir"; mkdir -p "$dir/upper" "$dir/work" "$dir/m"
log=$dir.log
s=$(date +%s)
echo "hil-arm64: building $(basename "$dir") on $base (log $log)" >&2
rc=0
unshare --mount --propagation private sh -eu -s "$dir" "$base" "$PKGS" > "$log" 2>&1 <<'INNER' || rc=$?
dir=$1; base=$2; pkgs=$3
m=$dir/m
mount -t overlay overlay -o "lowerdir=$base,upperdir=$dir/upper,workdir=$dir/work" "$m"
mount --bind /proc "$m/proc"
mount --bind /dev "$m/dev"
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
bounded() { # bounded SECONDS WHAT COMMAND...: names the step when it hangs (qemu-user can)
    secs=$1; what=$2; shift 2
    rc=0; timeout --kill-after=30 "$secs" "$@" || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "hil-arm64: TIMEOUT after $secs s: $what" >&2; fi
    return "$rc"
}
cp /etc/resolv.conf "$m/etc/resolv.conf"
bounded 900 "apt-get update" nice -n 10 chroot "$m" $E apt-get update -q
# shellcheck disable=SC2086
bounded 2400 "apt-get install $pkgs" nice -n 10 chroot "$m" $E DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends $pkgs
chroot "$m" $E apt-get clean
test -x "$m/bin/busybox" && test -x "$m/usr/bin/cam" && test -x "$m/usr/bin/gpioset"
INNER
if [ "$rc" != 0 ]; then
    tail -25 "$log" >&2
    echo "hil-arm64: FAIL building $(basename "$dir") (log $log)" >&2; exit 1
fi
rmdir "$dir/m" 2>/dev/null || true
echo "$(( $(date +%s) - s ))" > "$dir/.build-seconds"
touch "$dir/.complete"
echo "hil-arm64: $(basename "$dir") built in $(cat "$dir/.build-seconds") s" >&2
echo "$lowers"
