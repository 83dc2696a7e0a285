#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Prints Shutter's version, one string for --version, status, the log, EXIF and the .deb:
#   a tagged commit v0.3.0              -> 0.3.0
#   5 commits after it                  -> 0.3.0+5.gabc1234
#   no v* tag yet (VERSION says 0.3.0)  -> 0.3.0~git252.gabc1234 (before 0.3.0 itself)
#   uncommitted changes                 -> ... .dirty appended
#   no .git (a tarball)                 -> VERSION as is (also inside another repository)
# Each form sorts as Debian versions do (dpkg --compare-versions), so a later build
# upgrades an earlier one. SHUTTER_VERSION=V overrides (the package upgrade test).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${SHUTTER_VERSION:-}" ]; then echo "$SHUTTER_VERSION"; exit 0; fi
base=$(tr -d ' \n' < "$root/VERSION")
git() { command git -C "$root" "$@"; }
# Git only when this tree is a repository's top level: a tarball unpacked inside another
# repository (a packaging tree, a monorepo) must not take that one's commits.
top=$(command -v git >/dev/null 2>&1 && git rev-parse --show-toplevel 2>/dev/null || true)
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$root" && pwd -P)" ]; then
    echo "$base"; exit 0
fi
dirty=""
git diff --quiet HEAD -- 2>/dev/null || dirty=".dirty"
if described=$(git describe --tags --match 'v[0-9]*' --long 2>/dev/null); then
    # v0.3.0-5-gabc1234: tag, commits since, hash
    hash=${described##*-}
    rest=${described%-*}
    count=${rest##*-}
    tag=${rest%-*}
    tag=${tag#v}
    if [ "$count" = 0 ]; then echo "$tag$dirty"; else echo "$tag+$count.$hash$dirty"; fi
else
    echo "$base~git$(git rev-list --count HEAD).g$(git rev-parse --short=7 HEAD)$dirty"
fi
