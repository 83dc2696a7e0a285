#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Assembles the emulated-hardware VM's initramfs: busybox, udev, libcamera's vimc IPA,
# ALSA data, probe tools (cam, gpio*, aplay/arecord), rclone where the root has it, the
# release shutterd/shutterctl when given, every shared library they need (ldd), the board
# files, the VM-side scripts (vm/) and a test tone.
# Usage: make-initramfs.sh OUT.cpio[.gz] [BINDIR-with-shutterd]
# SYSROOT=DIR takes every program and library from that root instead of this machine (the
# second root: Debian trixie with libcamera 0.7.1, deploy/hil/build-trixie-root.sh; BINDIR is
# then a path inside it) and adds a virtual.yaml with two virtual cameras that the VM's init
# installs with hil.virtual=1 (a third with hil.bigcamera=1). The gpio* probe tools stay this
# machine's (libgpiod 1.6's command line; shutterd there uses the root's libgpiod 2).
# A SYSROOT of another architecture (make hil-arm64's arm64 root, under qemu-user) gives
# everything, busybox and the gpio* tools included (libgpiod 2's command line: vm/probe.sh
# speaks both); the button driver is then cross-compiled (aarch64-linux-gnu-gcc).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$1
bindir=${2:-}
root=$(mktemp -d /tmp/shutter-hil-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
sys=${SYSROOT:-}
foreign=""
if [ -n "$sys" ] && [ "$(chroot "$sys" uname -m)" != "$(uname -m)" ]; then foreign=$(chroot "$sys" uname -m); fi
mkdir -p "$root"/bin "$root"/sbin "$root"/usr/bin "$root"/usr/sbin "$root"/etc "$root"/proc \
    "$root"/sys "$root"/dev "$root"/run "$root"/tmp "$root"/mnt/data "$root"/hil \
    "$root"/usr/share/shutter "$root"/lib/systemd
# lib64 / lib as on the host (usrmerge: /lib -> usr/lib), so ldd's paths resolve unchanged.
for d in lib lib64; do
    if [ -L "$sys/$d" ]; then ln -sfn "$(readlink "$sys/$d")" "$root/$d"; fi
done
mkdir -p "$root/usr/lib" "$root/usr/lib64"

# copy_file PATH [FROM]: copies PATH (following links) from FROM (default: the system root,
# $SYSROOT or this machine) to the same path inside the image; a path already there stays.
copy_file() {
    [ -e "$root$1" ] && return 0
    mkdir -p "$root$(dirname "$1")"
    cp -L "${2-$sys}$1" "$root$1"
}
# sys_ldd PATH: ldd of PATH as the system root resolves it.
sys_ldd() { if [ -n "$sys" ]; then chroot "$sys" ldd "$1"; else ldd "$1"; fi; }
# add_elf PATH: the file and every library ldd lists for it (ldd already resolves the
# whole tree), the loader included.
add_elf() {
    copy_file "$1"
    sys_ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do
        copy_file "$lib"
    done
}
# add_host_elf PATH: the same from this machine whatever SYSROOT says (libraries the root
# already put there stay the root's: this machine's are older, so they run on them).
add_host_elf() {
    copy_file "$1" ""
    ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do
        copy_file "$lib" ""
    done
}

cp -L "${foreign:+$sys}/usr/bin/busybox" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

# Probe tools: prove the environment independently of shutterd, and help when it fails.
for b in /usr/bin/cam /usr/bin/aplay /usr/bin/arecord /usr/bin/amixer /usr/bin/socat; do
    add_elf "$b"
done
for b in /usr/bin/gpiodetect /usr/bin/gpioinfo /usr/bin/gpioget /usr/bin/gpioset /usr/bin/gpiomon; do
    if [ -n "$foreign" ]; then add_elf "$b"; else add_host_elf "$b"; fi
done

# rclone for the uploads (scenario power-cut-upload): the root's own, where it has one (this
# machine's Debian rclone 1.60 on bookworm; the trixie and arm64 roots have none, and their
# images stay ~54 MB lighter).
if [ -x "$sys/usr/bin/rclone" ]; then add_elf /usr/bin/rclone; fi

# udev: libcamera enumerates media devices through libudev and finds nothing without udevd.
add_elf /usr/bin/udevadm
ln -sf /usr/bin/udevadm "$root/lib/systemd/systemd-udevd"
mkdir -p "$root/lib/udev/rules.d" "$root/etc/udev"
cp "$sys"/lib/udev/rules.d/*.rules "$root/lib/udev/rules.d/"
# Rules that call helper programs absent here only add noise; udev works without them.
rm -f "$root"/lib/udev/rules.d/*persistent-storage*.rules "$root"/lib/udev/rules.d/*-cdrom_id.rules

# libcamera: the vimc IPA (signed, loaded in-process), its proxy and its configuration.
if [ -z "$sys" ]; then
    for f in /usr/lib/x86_64-linux-gnu/libcamera/ipa_vimc.so \
             /usr/lib/x86_64-linux-gnu/libcamera/vimc_ipa_proxy; do
        add_elf "$f"
    done
    copy_file /usr/lib/x86_64-linux-gnu/libcamera/ipa_vimc.so.sign
    copy_file /usr/share/libcamera/ipa/vimc/vimc.conf
else
    # Every IPA module, proxy and data file the root's libcamera has (0.7's layout differs).
    for d in $(cd "$sys" && ls -d usr/lib/*-linux-gnu/libcamera | sed 's|^|/|') /usr/libexec/libcamera /usr/share/libcamera; do
        [ -d "$sys$d" ] || continue
        mkdir -p "$root$d"
        cp -a "$sys$d/." "$root$d/"
        find "$sys$d" -type f | while read -r f; do
            if head -c 4 "$f" | grep -q 'ELF'; then add_elf "${f#$sys}"; fi
        done
    done
    # Two virtual cameras (libcamera's virtual pipeline; libcamera lists them after vimc):
    # Virtual0 offers 1920x1080 at 30 fps and 4608x2592 at 10 (Camera Module 3's full
    # size: the press moment's still stream beside 1080p video), Virtual1 1280x720 alone.
    # With hil.bigcamera=1 a third, Virtual2, offers only 7680x4320 (49.8 MB a buffer):
    # under a udmabuf limit it cannot start (the camera switch that fails).
    mkdir -p "$root/hil"
    cat > "$root/hil/virtual.yaml" <<'YAML'
%YAML 1.1
---
"Virtual0":
  supported_formats:
  - width: 1920
    height: 1080
    frame_rates:
    - 30
  - width: 4608
    height: 2592
    frame_rates:
    - 10
  test_pattern: "bars"
  location: "CameraLocationBack"
  model: "imx708-virtual"
"Virtual1":
  supported_formats:
  - width: 1280
    height: 720
    frame_rates:
    - 30
  test_pattern: "lines"
  location: "CameraLocationFront"
  model: "ov5647-virtual"
YAML
    cat > "$root/hil/virtual-big.yaml" <<'YAML'
"Virtual2":
  supported_formats:
  - width: 7680
    height: 4320
    frame_rates:
    - 10
  test_pattern: "bars"
  location: "CameraLocationExternal"
  model: "big-virtual"
YAML
fi

# ALSA configuration (alsa-lib refuses to open any PCM without it).
mkdir -p "$root/usr/share"
cp -a "$sys/usr/share/alsa" "$root/usr/share/alsa"

# The service, when built.
if [ -n "$bindir" ]; then
    for b in shutterd shutterctl; do
        [ -x "$sys$bindir/$b" ] || { echo "make-initramfs: $sys$bindir/$b missing" >&2; exit 1; }
        cp "$sys$bindir/$b" "$root/usr/bin/$b"
        sys_ldd "$bindir/$b" | awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do
            copy_file "$lib"
        done
    done
fi
cp -r "$repo/boards" "$root/usr/share/shutter/boards"

# A 440 Hz tone for the loopback "microphone": 48 kHz stereo S16, 30 s.
sox -n -r 48000 -c 2 -b 16 "$root/hil/tone.wav" synth 30 sine 440 vol 0.5

# The exact-timing button driver (a shell's sleeps are tens of ms under emulation).
# Static with a system root: it runs whatever C library the image carries.
cc=cc; [ "$foreign" = aarch64 ] && cc=aarch64-linux-gnu-gcc
[ -z "$foreign" ] || [ "$cc" != cc ] || { echo "make-initramfs: no cross compiler for $foreign" >&2; exit 1; }
"$cc" -O2 -Wall -Wextra -Werror ${sys:+-static} -o "$root/usr/bin/hil-pull" "$here/hil-pull.c"
cp "$here"/vm/*.sh "$root/hil/"
cp "$here/init" "$root/init"
chmod +x "$root/init" "$root"/hil/*.sh
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\naudio:x:29:\nvideo:x:44:\ninput:x:101:\nkvm:x:102:\nrender:x:103:\n' > "$root/etc/group"

mkdir -p "$(dirname "$out")"
# OUT ending in .gz is compressed; a plain .cpio boots faster under emulation (the kernel
# skips inflating ~280 MB, mostly the libraries libavcodec pulls in) at the cost of disk.
case "$out" in
    *.gz) (cd "$root" && find . | cpio -o -H newc --quiet) | gzip -6 > "$out.tmp" ;;
    *) (cd "$root" && find . | cpio -o -H newc --quiet) > "$out.tmp" ;;
esac
mv "$out.tmp" "$out"
echo "make-initramfs: $out $(du -k "$out" | cut -f1) KiB, $(du -sk "$root" | cut -f1) KiB unpacked" >&2
