#!/bin/sh
# Installs the Debian packages the emulated-hardware harness (`make hil`) needs, when missing:
# the kernel source and its build tools, QEMU, the initramfs pieces and the host-side checks.
# Kept apart from the main list so `make run` on a laptop does not pull in QEMU.
# debootstrap and the archive keys make the second root (Debian trixie, libcamera 0.7.1).
set -eu
exec sh "$(dirname "$0")/../install-deps.sh" linux-source-6.1 xz-utils bc flex bison libelf-dev \
    libssl-dev make gcc libc6-dev qemu-system-x86 busybox-static cpio udev libcamera-ipa \
    libcamera-tools e2fsprogs gpiod alsa-utils socat sox ffmpeg libimage-exiftool-perl jq \
    debootstrap debian-archive-keyring
