#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages the emulated-hardware harness (`make hil`) needs, when missing:
# the kernel source and its build tools, QEMU, the initramfs pieces (rclone: the VM's uploads)
# and the host-side checks.
# Kept apart from the main list so `make run` on a laptop does not pull in QEMU.
# debootstrap and the archive keys make the second root (Debian trixie, libcamera 0.7.1).
# `install-deps.sh arm64` adds what `make hil-arm64` needs on top: the arm64 cross compiler
# (its kernel and the static button driver) and qemu-system-aarch64.
set -eu
PKGS="linux-source-6.1 xz-utils bc flex bison libelf-dev \
    libssl-dev make gcc libc6-dev qemu-system-x86 busybox-static cpio udev libcamera-ipa \
    libcamera-tools e2fsprogs gpiod alsa-utils socat sox ffmpeg libimage-exiftool-perl jq \
    debootstrap debian-archive-keyring rclone"
[ "${1:-}" = arm64 ] && PKGS="$PKGS gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm"
# shellcheck disable=SC2086
exec sh "$(dirname "$0")/../install-deps.sh" $PKGS
