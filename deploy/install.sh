#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs a SOURCE BUILD of Shutter as a boot-time systemd service (docs/deploy.md, "Build
# from source"), for working on Shutter itself. To install Shutter on a Pi, use the Debian
# package (`make deb`, `apt install ./shutter_*.deb`: versioned, upgrades and removes
# cleanly; docs/deploy.md "Install the package"). This script refuses while that package is installed.
#   the release binaries      /usr/local/bin/shutterd, /usr/local/bin/shutterctl
#   the board files           /usr/share/shutter/boards/*.json
#   the README                /usr/share/shutter/README.md (the unit's Documentation=),
#                             and the docs/ it links to: /usr/share/shutter/docs/*.md
#   the unit                  /etc/systemd/system/shutterd.service (enabled, started)
#   the connector             /etc/systemd/system/shutterd-connector.service (MQTT; enabled
#                             with shutterd, started with it, ends at once with MQTT off)
#   the web page's socket     /etc/systemd/system/shutterd.socket (installed disabled:
#                             docs/control-and-api.md "From a phone" says how to turn it on)
#   the RTSP stream's socket  /etc/systemd/system/shutterd-rtsp.socket (installed disabled:
#                             docs/home-automation.md "Live video" says how to turn it on)
#   the user and its groups   /etc/sysusers.d/shutter.conf (user shutter in video, audio, gpio)
#   device access             /etc/udev/rules.d/60-shutter.rules
#   power-off for the gesture /etc/polkit-1/rules.d/50-shutter-poweroff.rules
#   a config                  /etc/shutter/shutter.json (only when absent) + shutter.json.example
#   the storage directory     /var/lib/shutter (owned by shutter)
# Safe to run again (an upgrade): an existing config and the photos are never touched.
#
# Usage: sudo deploy/install.sh [--binary PATH] [--no-start] [--root DIR]
#   --binary PATH  the shutterd to install (default: .build/release/shutterd; build it
#                  first with `make release`, which stamps the version); shutterctl is
#                  taken from beside it.
#   --no-start     enable the unit but do not (re)start it now.
#   --root DIR     install into the tree DIR instead of this system (an image being
#                  prepared, or a test): nothing is started or reloaded.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
binary="$repo/.build/release/shutterd"
start=yes
root=""

die() { echo "install: $*" >&2; exit 1; }
say() { echo "install: $*"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
        --no-start) start=no; shift ;;
        --root) [ $# -ge 2 ] || die "--root needs a directory"; root=$2; shift 2 ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

if [ -n "$root" ]; then
    [ -d "$root" ] || die "--root $root is not a directory"
    root=$(cd "$root" && pwd)
    [ "$root" = / ] && root=""
fi
# Live: this machine, with systemd running it. Otherwise only files are written.
live=no
[ -z "$root" ] && [ -d /run/systemd/system ] && live=yes

[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0 $*): it creates a user and writes /etc and /usr/local"
# Two copies would fight over the unit (/etc/systemd/system wins over the package's).
if [ -z "$root" ] && dpkg-query -W -f='${Status}' shutter 2>/dev/null | grep -q 'ok installed'; then
    die "the shutter package is installed: upgrade it with 'apt install ./shutter_<version>_<arch>.deb' (make deb), or 'apt remove shutter' first"
fi
[ -x "$binary" ] || die "no shutterd binary at $binary; build it with 'make release' or give --binary PATH"
command -v systemd-sysusers >/dev/null 2>&1 || die "systemd-sysusers not found: Shutter needs a systemd system"
command -v systemctl >/dev/null 2>&1 || die "systemctl not found: Shutter needs a systemd system"

# 1. Binaries (the new file is renamed over the old, so a running shutterd keeps its copy).
install -d -m 0755 "$root/usr/local/bin"
install -m 0755 "$binary" "$root/usr/local/bin/.shutterd.new"
mv -f "$root/usr/local/bin/.shutterd.new" "$root/usr/local/bin/shutterd"
say "installed $root/usr/local/bin/shutterd"
ctl="$(dirname "$binary")/shutterctl"
if [ -x "$ctl" ]; then
    install -m 0755 "$ctl" "$root/usr/local/bin/.shutterctl.new"
    mv -f "$root/usr/local/bin/.shutterctl.new" "$root/usr/local/bin/shutterctl"
    say "installed $root/usr/local/bin/shutterctl"
fi

# 2. Board files, the README (the unit's Documentation=) and the docs/ it links to.
install -d -m 0755 "$root/usr/share/shutter/boards"
for f in "$repo"/boards/*.json; do
    install -m 0644 "$f" "$root/usr/share/shutter/boards/"
done
install -m 0644 "$repo/README.md" "$root/usr/share/shutter/README.md"
install -d -m 0755 "$root/usr/share/shutter/docs"
for f in "$repo"/docs/*.md; do
    install -m 0644 "$f" "$root/usr/share/shutter/docs/"
done
say "installed board files in $root/usr/share/shutter/boards and the README and docs/ beside them"

# 3. The user and its groups (systemd-sysusers: idempotent, works on an offline tree).
install -d -m 0755 "$root/etc/sysusers.d"
install -m 0644 "$here/sysusers/shutter.conf" "$root/etc/sysusers.d/shutter.conf"
if [ -n "$root" ]; then
    systemd-sysusers --root="$root" "$root/etc/sysusers.d/shutter.conf"
else
    systemd-sysusers /etc/sysusers.d/shutter.conf
fi
uid=$(awk -F: '$1 == "shutter" { print $3 }' "$root/etc/passwd")
gid=$(awk -F: '$1 == "shutter" { print $3 }' "$root/etc/group")
[ -n "$uid" ] && [ -n "$gid" ] || die "the user shutter was not created in $root/etc/passwd"
say "user shutter ($uid:$gid) in groups video, audio, gpio"

# 4. Device access (gpiochip -> gpio, dma_heap -> video) where the OS does not grant it.
install -d -m 0755 "$root/etc/udev/rules.d"
install -m 0644 "$here/udev/60-shutter.rules" "$root/etc/udev/rules.d/60-shutter.rules"
if [ "$live" = yes ] && command -v udevadm >/dev/null 2>&1; then
    udevadm control --reload || true
    udevadm trigger --action=change --subsystem-match=gpio --subsystem-match=dma_heap || true
fi

# 5. Power-off for the shutdown gesture: polkit lets the user shutter ask logind.
install -d -m 0755 "$root/etc/polkit-1/rules.d"
install -m 0644 "$here/polkit/50-shutter-poweroff.rules" "$root/etc/polkit-1/rules.d/50-shutter-poweroff.rules"
if [ "$live" = yes ] && ! [ -x /usr/lib/polkit-1/polkitd ]; then
    say "polkitd is not installed; installing it (the shutdown gesture needs it)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends polkitd \
        || say "WARNING: could not install polkitd: the shutdown gesture will not power off"
fi

# 6. Config: the example always refreshed, the real one only created when absent.
install -d -m 0755 "$root/etc/shutter"
install -m 0644 "$here/shutter.json.example" "$root/etc/shutter/shutter.json.example"
if [ -e "$root/etc/shutter/shutter.json" ]; then
    say "kept the existing $root/etc/shutter/shutter.json"
else
    install -m 0640 -o 0 -g "$gid" "$here/shutter.json.example" "$root/etc/shutter/shutter.json"
    say "created $root/etc/shutter/shutter.json from the example"
fi

# 7. Storage (StateDirectory= also makes it at start; made here so a card can be
#    mounted on it and the files found before the first start).
if [ ! -d "$root/var/lib/shutter" ]; then
    install -d -m 0750 -o "$uid" -g "$gid" "$root/var/lib/shutter"
    say "created $root/var/lib/shutter"
fi

# 8. The unit: installed, enabled at boot, (re)started.
install -d -m 0755 "$root/etc/systemd/system"
install -m 0644 "$here/shutterd.service" "$root/etc/systemd/system/shutterd.service"
install -m 0644 "$here/shutterd-connector.service" "$root/etc/systemd/system/shutterd-connector.service"
# The web page's socket: installed, never enabled here (an upgrade keeps whatever
# the person chose). Opt-in: web.enabled + web.passwordHash, then enable it.
install -m 0644 "$here/shutterd.socket" "$root/etc/systemd/system/shutterd.socket"
say "installed $root/etc/systemd/system/shutterd.socket (disabled; docs/control-and-api.md \"From a phone\" to turn the web page on)"
install -m 0644 "$here/shutterd-rtsp.socket" "$root/etc/systemd/system/shutterd-rtsp.socket"
say "installed $root/etc/systemd/system/shutterd-rtsp.socket (disabled; docs/home-automation.md \"Live video\" to turn RTSP on)"
if [ "$live" = yes ]; then
    systemctl daemon-reload
    systemctl enable shutterd.service shutterd-connector.service
    if [ "$start" = yes ]; then
        systemctl restart shutterd.service
        say "shutterd started: systemctl status shutterd; journalctl -u shutterd -f"
    else
        say "shutterd enabled (starts at boot); start it now with: systemctl start shutterd"
    fi
else
    systemctl --root="${root:-/}" enable shutterd.service shutterd-connector.service
    say "shutterd enabled in ${root:-/} (nothing started: systemd is not running it)"
fi
