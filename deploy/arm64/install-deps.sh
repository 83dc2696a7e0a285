#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages the arm64 check (`make arm64`) needs, when missing:
# qemu-user-static (runs arm64 programs), binfmt-support (registers it with the kernel),
# debootstrap (makes the trixie arm64 root). Kept apart from the main list like
# deploy/hil/install-deps.sh.
set -eu
exec sh "$(dirname "$0")/../install-deps.sh" qemu-user-static binfmt-support debootstrap \
    debian-archive-keyring binutils
