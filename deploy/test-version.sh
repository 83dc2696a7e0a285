#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Checks deploy/version.sh on throwaway repositories: no v* tag yet, a tagged commit,
# commits after it, uncommitted changes, a tarball without .git (alone or unpacked inside
# another repository), the override; and that
# each later form sorts after the earlier one as dpkg compares versions (an upgrade).
set -eu
command -v git >/dev/null 2>&1 || { echo "test-version: skipped: no git here (a tarball build has VERSION only)"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
r="$tmp/repo"
mkdir -p "$r/deploy"
cp "$here/version.sh" "$r/deploy/"
echo 0.3.0 > "$r/VERSION"
g() { git -C "$r" -c user.name=t -c user.email=t@t.example "$@" >/dev/null 2>&1; }
v() { SHUTTER_VERSION= sh "$r/deploy/version.sh"; }
expect() { # expect PATTERN NAME: the version matches the shell pattern
    got=$(v)
    case "$got" in
        $1) echo "test-version: ok   $2: $got" ;;
        *) echo "test-version: FAIL $2: got '$got', want $1"; failed=1 ;;
    esac
}
later() { # later OLD NEW: dpkg sorts NEW after OLD
    if dpkg --compare-versions "$1" lt "$2"; then echo "test-version: ok   $1 < $2"
    else echo "test-version: FAIL $1 is not before $2"; failed=1; fi
}
expect 0.3.0 "a tarball without .git: VERSION"
g init -q
g add -A
g commit -qm one
g commit -qm two --allow-empty
untagged=$(v)
expect '0.3.0~git2.g???????' "no v* tag yet: VERSION, commit count, hash"
echo change >> "$r/VERSION.txt"
g add VERSION.txt
expect '0.3.0~git2.g???????.dirty' "uncommitted changes"
g commit -qm three
g tag v0.3.0
tagged=$(v)
expect 0.3.0 "the tagged commit"
g commit -qm four --allow-empty
g commit -qm five --allow-empty
after=$(v)
expect '0.3.0+2.g???????' "two commits after the tag"
later "$untagged" "$tagged"
later "$tagged" "$after"
# A tarball unpacked inside another repository: VERSION, not the outer repository's commits.
mkdir -p "$r/vendor/shutter/deploy"
cp "$here/version.sh" "$r/vendor/shutter/deploy/"
echo 0.4.0 > "$r/vendor/shutter/VERSION"
got=$(SHUTTER_VERSION= sh "$r/vendor/shutter/deploy/version.sh")
[ "$got" = 0.4.0 ] && echo "test-version: ok   a tarball inside another repository: VERSION ($got)" ||
    { echo "test-version: FAIL a tarball inside another repository gave $got, want 0.4.0"; failed=1; }
got=$(SHUTTER_VERSION=9.9 sh "$r/deploy/version.sh")
[ "$got" = 9.9 ] && echo "test-version: ok   SHUTTER_VERSION overrides" || { echo "test-version: FAIL override gave $got"; failed=1; }
exit $failed
