#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Fetches Debian trixie's -dev packages (headers only matter) with `apt-get download`
# through a private apt configuration, and unpacks them with `dpkg-deb -x` into
# $OUT (default .build/compat/trixie). Never touches the system's apt config or
# installs anything. Cached: a second run with the same package list does nothing.
# SUITES (default "trixie") are the archive suites apt sees; a package named
# NAME/SUITE in PKGS comes from that suite (libcamera-dev/trixie-backports).
set -eu

OUT=${OUT:-.build/compat/trixie}
SUITES=${SUITES:-trixie}
# The Debian archive this machine's apt uses (MIRROR overrides), looked up only when
# a fetch is needed (below).
MIRROR=${MIRROR:-}
# Header packages for the shims, plus the header-only packages their headers include.
PKGS=${PKGS:-"libgpiod-dev libcamera-dev libavcodec-dev libavformat-dev libavutil-dev \
libswresample-dev libswscale-dev libmicrohttpd-dev libsodium-dev libfreetype-dev"}

STAMP="$OUT/.fetched"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PKGS" ]; then
    exit 0
fi

[ -n "$MIRROR" ] || MIRROR=$(sh "$(dirname "$0")/../apt-archive-uri.sh")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
APT="$OUT/apt"
ROOT="$OUT/root"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/debs" "$ROOT"

# Debian 12's debian-archive-keyring already carries the trixie archive keys.
KEYRING=${KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

: > "$APT/sources.list"
for suite in $SUITES; do
    echo "deb [signed-by=$KEYRING] $MIRROR $suite main" >> "$APT/sources.list"
done

# Every apt path that holds state points into $APT; system preferences and extra
# sources are ignored so a pin on the host cannot change what is fetched.
set -- -o Dir::Etc::SourceList="$APT/sources.list" \
       -o Dir::Etc::SourceParts=/dev/null \
       -o Dir::Etc::Preferences=/dev/null \
       -o Dir::Etc::PreferencesParts=/dev/null \
       -o Dir::State::Lists="$APT/lists" \
       -o Dir::Cache="$APT/cache" \
       -o Acquire::Languages=none \
       -o APT::Get::List-Cleanup=false \
       -q
# As root apt drops to the _apt user for downloads; that user may not be able to
# write into a build folder, so keep root for this private fetch.
[ "$(id -u)" -eq 0 ] && set -- "$@" -o APT::Sandbox::User=root

echo "compat: apt-get update ($SUITES lists into $APT/lists)"
apt-get "$@" update >"$APT/update.log" 2>&1 || { cat "$APT/update.log" >&2; echo "compat: FAIL apt-get update for $SUITES" >&2; exit 1; }

rm -f "$APT/debs"/*.deb
# shellcheck disable=SC2086
(cd "$APT/debs" && apt-get "$@" download $PKGS) || { echo "compat: FAIL apt-get download $PKGS" >&2; exit 1; }

rm -rf "$ROOT" && mkdir -p "$ROOT"
for deb in "$APT/debs"/*.deb; do
    dpkg-deb -x "$deb" "$ROOT"
    echo "compat: unpacked $(basename "$deb")"
done
rm -f "$APT/debs"/*.deb # the unpacked tree is the cache
printf '%s' "$PKGS" > "$STAMP"
