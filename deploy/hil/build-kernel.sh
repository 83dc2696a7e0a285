#!/bin/sh
# Builds (or reuses) the emulated-hardware VM's kernel and prints the bzImage path.
# tinyconfig + kernel.options from Debian's linux-source-6.1, out of tree, cached outside
# the clone under $HIL_CACHE/kernel-<hash>/ where <hash> covers the options, the source
# package version and RECIPE (bump it when the build steps below change what they produce):
# a fresh CI clone on the same machine reuses it (~7 min cold on 2 cores).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${HIL_CACHE:-/var/cache/shutter-hil}
tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || { echo "build-kernel: $tarball missing: run deploy/hil/install-deps.sh" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
opts=$(sed 's/#.*//' "$here/kernel.options" | tr -s ' \t\n' '\n' | sed '/^$/d' | sort -u)
RECIPE=1
hash=$(printf 'recipe %s\n%s\n%s\n' "$RECIPE" "$srcver" "$opts" | sha256sum | cut -c1-16)
out="$cache/kernel-$hash"
if [ -f "$out/bzImage" ]; then echo "$out/bzImage"; exit 0; fi
mkdir -p "$cache"
# One builder at a time per machine; a second caller waits, then finds the cached image.
exec 9>"$cache/.lock-$hash"
flock 9
if [ -f "$out/bzImage" ]; then echo "$out/bzImage"; exit 0; fi
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
    make -C "$src" O="$obj" ARCH=x86_64 tinyconfig
    # shellcheck disable=SC2086
    "$src/scripts/config" --file "$obj/.config" $(for o in $opts; do printf -- '-e %s ' "$o"; done)
    make -C "$src" O="$obj" ARCH=x86_64 olddefconfig
} >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
# An option whose dependencies are missing is silently dropped by olddefconfig: refuse that.
bad=""
for o in $opts; do grep -q "^CONFIG_$o=y" "$obj/.config" || bad="$bad $o"; done
[ -z "$bad" ] || { echo "build-kernel: options not enabled after olddefconfig:$bad" >&2; exit 1; }
jobs=$(nproc)
nice -n 10 make -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" bzImage >>"$log" 2>&1 \
    || { tail -30 "$log" >&2; exit 1; }
mkdir -p "$out.tmp"
cp "$obj/arch/x86/boot/bzImage" "$obj/.config" "$out.tmp/"
echo "$(( $(date +%s) - start ))" > "$out.tmp/build-seconds"
rm -rf "$out" && mv "$out.tmp" "$out"
rm -rf "$obj"
echo "build-kernel: built in $(cat "$out/build-seconds") s" >&2
echo "$out/bzImage"
