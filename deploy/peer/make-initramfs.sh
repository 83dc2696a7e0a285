#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The part of make peer's initramfs that the harness's (deploy/hil/make-initramfs.sh) lacks,
# as a second cpio archive the kernel unpacks over the first: Raspberry Pi's libcamera fork
# (/opt/rpi-libcamera) and rpicam-apps (/opt/rpicam-apps) with every library ldd lists for
# them, GNU time, peer-clock (static), the VM-side scripts (vm/ -> /hil/) and their settings
# (peer.env). Usage: make-initramfs.sh ROOT OUT.cpio ENVFILE   (ROOT: the merged peer root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sys=$1; out=$2; envfile=$3
root=$(mktemp -d /tmp/shutter-peer-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
copy_file() {
    [ -e "$root$1" ] && return 0
    mkdir -p "$root$(dirname "$1")"
    cp -L "$sys$1" "$root$1"
}
# ldd as the root resolves it, with the fork's and rpicam-apps' folders first (as in the VM).
ldp=/opt/rpi-libcamera/lib/x86_64-linux-gnu:/opt/rpicam-apps/lib/x86_64-linux-gnu
add_deps() {
    chroot "$sys" env LD_LIBRARY_PATH=$ldp ldd "$1" 2>/dev/null |
        awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do copy_file "$lib"; done
}
# lib / lib64 as links, as in the first archive: an entry of another type would replace them.
for d in lib lib64; do
    if [ -L "$sys/$d" ]; then ln -sfn "$(readlink "$sys/$d")" "$root/$d"; fi
done
mkdir -p "$root/opt" "$root/usr/bin" "$root/usr/lib" "$root/usr/lib64" "$root/hil"
cp -a "$sys/opt/rpi-libcamera" "$sys/opt/rpicam-apps" "$root/opt/"
# Headers, pkg-config and static archives are not needed at run time.
rm -rf "$root/opt/rpi-libcamera/include" "$root/opt/rpicam-apps/include" \
    "$root"/opt/*/lib/x86_64-linux-gnu/pkgconfig
find "$root/opt" -type f | while read -r f; do
    if head -c 4 "$f" | grep -q ELF; then add_deps "${f#$root}"; fi
done
copy_file /usr/bin/time
add_deps /usr/bin/time
cc -O2 -Wall -Wextra -Werror -static -o "$root/usr/bin/peer-clock" "$here/peer-clock.c"
cp "$here"/vm/*.sh "$root/hil/"
cp "$envfile" "$root/hil/peer.env"
for b in rpicam-still rpicam-vid rpicam-hello rpicam-jpeg; do
    [ -x "$root/opt/rpicam-apps/bin/$b" ] && ln -sf "/opt/rpicam-apps/bin/$b" "$root/usr/bin/$b"
done
(cd "$root" && find . | cpio -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
echo "peer: initramfs part $out $(du -k "$out" | cut -f1) KiB" >&2
