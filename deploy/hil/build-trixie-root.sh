#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds (or reuses) the emulated-hardware harness's second root and prints its path: Debian
# trixie amd64 with trixie-backports' libcamera 0.7.1 (the minor release Raspberry Pi OS
# trixie ships; built with the virtual pipeline handler), trixie's Swift 6.0.3 and the
# project's -dev packages, plus what the VM runs beside shutterd (cam, the vimc IPA, udev,
# gpiod, alsa-utils, socat). The same recipe as make arm64's root (deploy/arm64/build-root.sh)
# for this machine's architecture, cached under $HIL_CACHE/root-<hash>/ like the kernel.
# Root only; cold ~10 min, ~3 GB.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ROOT_ARCH=amd64 ARM64_CACHE=${HIL_CACHE:-/var/cache/shutter-hil} \
EXTRA_PKGS="libcamera-tools/trixie-backports libcamera-v4l2/trixie-backports libcamera-ipa/trixie-backports udev gpiod alsa-utils socat" \
    exec sh "$here/../arm64/build-root.sh"
