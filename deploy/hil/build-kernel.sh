#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds (or reuses) the emulated-hardware VM's kernel and prints the image's path.
# tinyconfig + kernel.options from Debian's linux-source-6.1, out of tree, cached outside
# the clone under $HIL_CACHE/kernel-<hash>/ where <hash> covers the options, the source
# package version, the architecture and RECIPE (bump it when the build steps below change
# what they produce): a fresh CI clone on the same machine reuses it (~7 min cold on 2 cores).
# Usage: build-kernel.sh [x86_64|arm64]: x86_64 (default) gives bzImage for
# qemu-system-x86_64; arm64 cross-builds Image with gcc-aarch64-linux-gnu for
# qemu-system-aarch64 -M virt (make hil-arm64).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
arch=${1:-x86_64}
case $arch in
    x86_64) image=arch/x86/boot/bzImage; name=bzImage; kmake="ARCH=x86_64" ;;
    arm64) image=arch/arm64/boot/Image; name=Image; kmake="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
           command -v aarch64-linux-gnu-gcc > /dev/null || {
               echo "build-kernel: aarch64-linux-gnu-gcc missing: run deploy/hil/install-deps.sh arm64" >&2; exit 1; } ;;
    *) echo "build-kernel: unknown architecture '$arch' (x86_64, arm64)" >&2; exit 2 ;;
esac
cache=${HIL_CACHE:-/var/cache/shutter-hil}
tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || { echo "build-kernel: $tarball missing: run deploy/hil/install-deps.sh" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
# The options for this architecture: common lines, and "ARCH:" lines of this one.
opts=$(sed -e 's/#.*//' -e "s/^$arch://" -e '/^[a-z0-9_]*:/d' "$here/kernel.options" |
    tr -s ' \t\n' '\n' | sed '/^$/d' | sort -u)
RECIPE=1
# x86_64's hash input is the one from before arm64 existed, so its cached kernel stays valid.
recipe=$RECIPE; [ "$arch" = x86_64 ] || recipe="$RECIPE $arch"
hash=$(printf 'recipe %s\n%s\n%s\n' "$recipe" "$srcver" "$opts" | sha256sum | cut -c1-16)
out="$cache/kernel-$hash"
if [ -f "$out/$name" ]; then echo "$out/$name"; exit 0; fi
mkdir -p "$cache"
# One builder at a time per machine; a second caller waits, then finds the cached image.
exec 9>"$cache/.lock-$hash"
flock 9
if [ -f "$out/$name" ]; then echo "$out/$name"; exit 0; fi
src="$cache/src-$srcver"
if [ ! -f "$src/.extracted" ]; then
    echo "build-kernel: extracting $tarball" >&2
    rm -rf "$src" && mkdir -p "$src"
    tar -xJf "$tarball" -C "$src" --strip-components=1
    touch "$src/.extracted"
fi
obj="$cache/build-$hash"
rm -rf "$obj" && mkdir -p "$obj"
start=$(date +%s)
log="$obj/build.log"
echo "build-kernel: building in $obj (log $log)" >&2
{
    # shellcheck disable=SC2086
    make -C "$src" O="$obj" $kmake tinyconfig
    # shellcheck disable=SC2086
    "$src/scripts/config" --file "$obj/.config" $(for o in $opts; do printf -- '-e %s ' "$o"; done)
    # shellcheck disable=SC2086
    make -C "$src" O="$obj" $kmake olddefconfig
} >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
# An option whose dependencies are missing is silently dropped by olddefconfig: refuse that.
bad=""
for o in $opts; do grep -q "^CONFIG_$o=y" "$obj/.config" || bad="$bad $o"; done
[ -z "$bad" ] || { echo "build-kernel: options not enabled after olddefconfig:$bad" >&2; exit 1; }
jobs=$(nproc)
# shellcheck disable=SC2086
nice -n 10 make -C "$src" O="$obj" $kmake -j"$jobs" "$name" >>"$log" 2>&1 \
    || { tail -30 "$log" >&2; exit 1; }
mkdir -p "$out.tmp"
cp "$obj/$image" "$obj/.config" "$out.tmp/"
echo "$(( $(date +%s) - start ))" > "$out.tmp/build-seconds"
rm -rf "$out" && mv "$out.tmp" "$out"
rm -rf "$obj"
echo "build-kernel: $arch built in $(cat "$out/build-seconds") s" >&2
echo "$out/$name"
