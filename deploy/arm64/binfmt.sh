#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Makes sure this machine runs arm64 programs through qemu-user: qemu-aarch64 registered with
# binfmt_misc with flag F (the interpreter is opened at registration, so it also runs inside
# a chroot). Containers often start without it. Root only. Used by make arm64 and make
# hil-arm64 (debootstrap and apt inside the arm64 root, the release build, ldd there).
set -eu
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
    [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" || {
        echo "arm64: FAIL cannot mount binfmt_misc (a container without that right?)" >&2; exit 1; }
    update-binfmts --enable qemu-aarch64
fi
grep -q '^enabled' "$binfmt/qemu-aarch64" && grep -q '^flags:.*F' "$binfmt/qemu-aarch64" || {
    echo "arm64: FAIL qemu-aarch64 is not registered with binfmt_misc (flag F): $(tr '\n' ' ' < "$binfmt/qemu-aarch64")" >&2
    exit 1; }
