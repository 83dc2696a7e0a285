#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds (or reuses) make hil-arm64's root and prints it as an overlay lowerdir string (the
# layer first, the base last): make arm64's cached Debian trixie arm64 root
# (deploy/arm64/build-root.sh: Swift 6.0.3, libcamera 0.7.1 from trixie-backports, libgpiod
# 2, FFmpeg 7; left untouched underneath) plus one overlay layer with what the VM runs beside
# shutterd, the arm64 builds of what the x86_64 roots take from this machine: busybox, udev,
# cam and the vimc IPA, gpiod's tools (libgpiod 2's command line), alsa-utils, socat.
# The layer is an overlayfs upper directory under $HIL_CACHE/arm64-layer-<hash>/ (<hash>:
# the base, the packages, RECIPE), built by deploy/overlay-layer.sh (mounts in a private
# mount namespace only, as make peer's layers); apt runs
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
# shellcheck source=../overlay-layer.sh
. "$here/../overlay-layer.sh"
export pkgs="$PKGS"
overlay_layer hil-arm64 "$dir" "$base" '
cp /etc/resolv.conf "$m/etc/resolv.conf"
bounded 900 "apt-get update" nice -n 10 chroot "$m" $E apt-get update -q
bounded 2400 "apt-get install $pkgs" nice -n 10 chroot "$m" $E DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends $pkgs
in_root apt-get clean
test -x "$m/bin/busybox" && test -x "$m/usr/bin/cam" && test -x "$m/usr/bin/gpioset"
'
echo "$lowers"
