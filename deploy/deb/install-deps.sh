#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages `make deb` and its install test need, when missing:
# dpkg-dev (dpkg-shlibdeps), binutils (strip), lintian (the package check), debootstrap
# and debian-archive-keyring (the clean roots the package is installed into), and
# systemd-container (systemd-nspawn boots such a root with systemd as PID 1: make units-test).
# Kept apart from the main list like deploy/arm64/install-deps.sh.
set -eu
exec sh "$(dirname "$0")/../install-deps.sh" dpkg-dev binutils lintian debootstrap debian-archive-keyring systemd-container
