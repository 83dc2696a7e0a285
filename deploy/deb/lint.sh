#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lintian on the package: any error fails; warnings are printed. The package carries no
# overrides (the last ones, for the missing man pages, went with issue 31); one added
# later goes in /usr/share/lintian/overrides/shutter with why.
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
echo "lint: no lintian errors; $(echo "$out" | grep -c '^W: ' || true) warnings, $(echo "$out" | grep -c '^O: ' || true) overridden"
