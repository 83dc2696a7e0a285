#!/bin/sh
# Installs the Debian packages the emulated-hardware harness (`make hil`) needs, when missing:
# the kernel source and its build tools, QEMU, the initramfs pieces and the host-side checks.
# Kept apart from deploy/install-deps.sh so a plain `make test` does not pull in QEMU.
set -eu
PKGS="linux-source-6.1 xz-utils bc flex bison libelf-dev libssl-dev make gcc libc6-dev \
qemu-system-x86 busybox-static cpio udev libcamera-ipa libcamera-tools \
e2fsprogs gpiod alsa-utils socat sox ffmpeg libimage-exiftool-perl"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "hil/install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $missing
