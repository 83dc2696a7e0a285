#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Removes what deploy/install.sh installed: the binaries, the unit, the board files,
# the udev, polkit and sysusers files. KEEPS the photos and videos (/var/lib/shutter),
# the config (/etc/shutter/shutter.json) and the user shutter that owns the files
# (remove it by hand with `userdel shutter` once the files are copied off).
# Safe to run again.
#
# Usage: sudo deploy/uninstall.sh [--root DIR]   (--root: a tree, as for install.sh)
set -eu

root=""
die() { echo "uninstall: $*" >&2; exit 1; }
say() { echo "uninstall: $*"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --root) [ $# -ge 2 ] || die "--root needs a directory"; root=$2; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
if [ -n "$root" ]; then
    [ -d "$root" ] || die "--root $root is not a directory"
    root=$(cd "$root" && pwd)
    [ "$root" = / ] && root=""
fi
live=no
[ -z "$root" ] && [ -d /run/systemd/system ] && live=yes
[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0)"

# Stop first: SIGTERM lets a clip being recorded finalise (TimeoutStopSec=30).
for sock in shutterd.socket shutterd-rtsp.socket; do
    [ -e "$root/etc/systemd/system/$sock" ] || continue
    if [ "$live" = yes ]; then
        systemctl disable --now "$sock" || true
    else
        systemctl --root="${root:-/}" disable "$sock" || true
    fi
done
if [ -e "$root/etc/systemd/system/shutterd-connector.service" ]; then
    if [ "$live" = yes ]; then
        systemctl disable --now shutterd-connector.service || true
    else
        systemctl --root="${root:-/}" disable shutterd-connector.service || true
    fi
fi
if [ -e "$root/etc/systemd/system/shutterd.service" ]; then
    if [ "$live" = yes ]; then
        systemctl disable --now shutterd.service || true
    else
        systemctl --root="${root:-/}" disable shutterd.service || true
    fi
fi

rm -f "$root/etc/systemd/system/shutterd.service" "$root/etc/systemd/system/shutterd.socket" \
      "$root/etc/systemd/system/shutterd-rtsp.socket" "$root/etc/systemd/system/shutterd-connector.service" \
      "$root/usr/local/bin/shutterd" "$root/usr/local/bin/shutterctl" \
      "$root/etc/polkit-1/rules.d/50-shutter-poweroff.rules" \
      "$root/etc/udev/rules.d/60-shutter.rules" \
      "$root/etc/sysusers.d/shutter.conf" \
      "$root/etc/shutter/shutter.json.example"
rm -rf "$root/usr/share/shutter"
# /etc/shutter stays while it holds a config.
rmdir "$root/etc/shutter" 2>/dev/null || true

if [ "$live" = yes ]; then
    systemctl daemon-reload || true
    command -v udevadm >/dev/null 2>&1 && udevadm control --reload || true
fi

say "removed shutterd"
[ -e "$root/etc/shutter/shutter.json" ] && say "kept the config $root/etc/shutter/shutter.json"
[ -d "$root/var/lib/shutter" ] && say "kept the photos and videos in $root/var/lib/shutter"
grep -q '^shutter:' "$root/etc/passwd" 2>/dev/null && say "kept the user shutter (userdel shutter to remove it)"
exit 0
