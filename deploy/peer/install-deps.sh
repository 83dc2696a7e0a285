#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The host packages make peer needs, when missing: the emulated-hardware harness's
# (deploy/hil/install-deps.sh: QEMU, busybox, cpio, e2fsprogs, ffmpeg/ffprobe, jq, ...), plus
# git (the pinned snapshots), patch (rpicam-apps-virtual.patch) and debootstrap (the
# libcamera 0.7.1 root). What the peer root itself needs is installed into it by build-root.sh.
set -eu
here=$(dirname "$0")
sh "$here/../hil/install-deps.sh"
exec sh "$here/../install-deps.sh" git patch debootstrap util-linux
