#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lintian on the package: any error fails. Warnings the package keeps are overridden in
# deploy/deb/lintian-overrides (installed as /usr/share/lintian/overrides/shutter), each
# with why; what is left is printed.
set -eu
deb=$1
command -v lintian >/dev/null || { echo "lint: FAIL lintian is not installed (deploy/deb/install-deps.sh)" >&2; exit 1; }
rc=0
out=$(lintian --display-level '>=warning' --show-overrides "$deb" 2>&1) || rc=$?
# N: lines repeat the overrides' comments; the file itself says why.
echo "$out" | grep -v '^N: ' | sed 's/^/lintian: /'
if echo "$out" | grep -q '^E: '; then
    echo "lint: FAIL lintian reports errors on $(basename "$deb")" >&2; exit 1
fi
[ "$rc" = 0 ] || [ "$rc" = 2 ] || { echo "lint: FAIL lintian exited $rc" >&2; exit 1; }
echo "lint: no lintian errors; $(echo "$out" | grep -c '^W: ' || true) warnings, $(echo "$out" | grep -c '^O: ' || true) overridden (each with why in deploy/deb/lintian-overrides)"
