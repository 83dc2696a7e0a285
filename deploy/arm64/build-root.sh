#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds (or reuses) a Debian trixie arm64 root for the arm64 check and prints its path.
# debootstrap --arch=arm64 runs the arm64 half under qemu-user (binfmt_misc, see run.sh);
# then, inside, apt-get installs trixie's swiftlang (Swift 6.0.3), the -dev packages
# deploy/install-deps.sh names, build-essential (dpkg-dev: the arm64 .deb is built here),
# and the tools the Core and Media unit tests call (ffmpeg/ffprobe, exiftool, exif).
# libcamera-dev comes from trixie-backports (libcamera 0.7, soname libcamera.so.0.7): the
# libcamera Raspberry Pi OS trixie ships, so the arm64 package runs there (issue 21).
# The archive is the one this machine's apt uses (deploy/apt-archive-uri.sh). Cached outside the clone, like the emulated-hardware
# kernel, under $ARM64_CACHE/root-<hash>/ where <hash> covers the suite, the architecture,
# the package list and RECIPE (bump it when the steps below change what they produce).
# Root only; ~3 GB.
# ROOT_ARCH=amd64 builds the same root for this machine's architecture (no emulation), and
# EXTRA_PKGS adds packages (NAME/SUITE as for libcamera-dev): the emulated-hardware harness's
# libcamera 0.7.1 root (deploy/hil/build-trixie-root.sh) is made this way.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${ARM64_CACHE:-/var/cache/shutter-arm64}
ARCH=${ROOT_ARCH:-arm64}
SUITE=trixie
RECIPE=2
# The -dev names (and pkg-config) of the main list; their trixie names are the same
# (libgpiod-dev is 2.x there, libasound2-dev keeps its name over libasound2t64).
devs=$(sh "$here/../install-deps.sh" --list | tr ' ' '\n' | grep -E -- '-dev$|^pkg-config$' |
    sed 's|^libcamera-dev$|libcamera-dev/trixie-backports|' | tr '\n' ' ')
# binutils-gold: Package.swift links with gold on arm64 (GNU_RELRO and W^X; trixie ships it
# apart from binutils).
# GStreamer's -dev packages (the RTSP server) pull libdw-dev and libelf-dev, while backports'
# libcamera pulls elfutils' libraries from trixie-backports: their -dev packages must come
# from there too, or apt finds no solution.
case " $devs " in *" libgstrtspserver-1.0-dev "*) devs="$devs libdw-dev/trixie-backports libelf-dev/trixie-backports " ;; esac
PKGS="swiftlang build-essential binutils-gold $devs ffmpeg exif libimage-exiftool-perl mount${EXTRA_PKGS:+ $EXTRA_PKGS}"
hash=$(printf 'recipe %s\n%s\n%s\n%s\n' "$RECIPE" "$SUITE" "$ARCH" "$PKGS" | sha256sum | cut -c1-16)
out="$cache/root-$hash"
# .complete is written last (usr/bin/swift is an absolute symlink: test it from inside).
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
mkdir -p "$cache"
# One builder at a time per machine; a second caller waits, then finds the cached root.
exec 9>"$cache/.lock-$hash"
flock 9
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
archive=$(sh "$here/../apt-archive-uri.sh")
tmp="$out.tmp"
# Every mount below lives in a private mount namespace, so an interrupted build leaves
# nothing mounted in $tmp; refuse to delete it if something still is.
if grep -q " $tmp/" /proc/self/mountinfo; then
    echo "$ARCH: FAIL something is mounted under $tmp: unmount it first" >&2; exit 1
fi
rm -rf "$tmp"
start=$(date +%s)
log="$cache/root-$hash.log"
echo "$ARCH: building the trixie $ARCH root in $tmp from $archive (log $log)" >&2
unshare --mount --propagation private sh -eu -s "$SUITE" "$tmp" "$archive" "$PKGS" "$ARCH" >"$log" 2>&1 <<'INNER' ||
suite=$1; tmp=$2; archive=$3; pkgs=$4; arch=$5
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
# Each step under a bound about twice its cold time here, so a qemu-user deadlock (one sat
# 21 min) fails naming the command instead of hanging the build.
bounded() { # bounded SECONDS COMMAND...
    secs=$1; shift
    rc=0
    timeout --kill-after=30 "$secs" "$@" || rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "$arch: TIMEOUT after ${secs} s: $*" >&2; fi
    return "$rc"
}
bounded 2400 nice -n 15 debootstrap --arch="$arch" --variant=minbase "$suite" "$tmp" "$archive"
# Faster dpkg under emulation; no docs, manuals or translations in a build root.
echo force-unsafe-io > "$tmp/etc/dpkg/dpkg.cfg.d/shutter-unsafe-io"
printf 'path-exclude /usr/share/%s/*\n' doc man info locale > "$tmp/etc/dpkg/dpkg.cfg.d/shutter-nodoc"
echo 'Acquire::Languages "none";' > "$tmp/etc/apt/apt.conf.d/99shutter-nolang"
cp /etc/resolv.conf "$tmp/etc/"
echo "deb $archive $suite-backports main" > "$tmp/etc/apt/sources.list.d/backports.list"
mount --bind /proc "$tmp/proc"  # swift finds itself through /proc/self/exe
mount --bind /dev "$tmp/dev"
bounded 600 nice -n 15 chroot "$tmp" $E apt-get update -q
# shellcheck disable=SC2086
bounded 5400 nice -n 15 chroot "$tmp" $E DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends $pkgs
chroot "$tmp" $E apt-get clean
bounded 300 chroot "$tmp" $E swift --version
INNER
    { tail -30 "$log" >&2; echo "$ARCH: FAIL building the root (log $log)" >&2; exit 1; }
echo "$(( $(date +%s) - start ))" > "$tmp/.build-seconds"
touch "$tmp/.complete"
rm -rf "$out" && mv "$tmp" "$out"
echo "$ARCH: root built in $(cat "$out/.build-seconds") s" >&2
echo "$out"
