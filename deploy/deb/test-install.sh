#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The package's life in a clean root (issue 21): install, upgrade, remove, purge.
#   test-install.sh DEB [SUITE ARCH [backports]]      (default bookworm amd64)
# backports: SUITE-backports is in the root's apt sources too, standing in for Raspberry Pi
# OS trixie's archive, which carries the libcamera 0.7 the arm64 package is built against.
# A copy of a cached debootstrap minbase root (make-root.sh) gets `apt install ./DEB`,
# which pulls only the package's Depends. Then:
#   install  the user shutter in video, audio, gpio; shutterd.service enabled (offline
#            `systemctl is-enabled`), the socket not; the config root:shutter 0640;
#            the installed `shutterd --board sim`, run as shutter, takes a photo and a
#            clip through the installed `shutterctl`; its version is the package's
#   upgrade  to the same package repacked with a higher version (dpkg's upgrade path:
#            maintainer scripts, conffile): the edited config, every file in DCIM and
#            the counter kept, the next photo continues the numbering
#   remove   programs gone; DCIM, config and user kept; the unit not masked
#   purge    config and runtime settings gone; DCIM, the counter and the user kept
# Prints each check and the time. Root only; runs in a private mount namespace.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
deb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
suite=${2:-bookworm}
arch=${3:-amd64}
backports=${4:-}
[ "$(id -u)" -eq 0 ] || { echo "deb-test: run as root" >&2; exit 1; }
t0=$(date +%s)
base=$(sh "$here/make-root.sh" "$suite" "$arch")
cache=${DEB_ROOT_CACHE:-/var/cache/shutter-deb}
work=$(mktemp -d /var/tmp/shutter-deb-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/root"
cp -a "$base" "$root"
cp /etc/resolv.conf "$root/etc/"
if [ "$backports" = backports ]; then
    echo "deb $(sh "$here/../apt-archive-uri.sh") $suite-backports main" > "$root/etc/apt/sources.list.d/backports.list"
fi

# The upgrade: the same package with a higher version (dpkg --compare-versions gt).
version=$(dpkg-deb -f "$deb" Version)
newer="$version+upgradetest1"
dpkg-deb -R "$deb" "$work/repack"
sed -i "s/^Version: .*/Version: $newer/" "$work/repack/DEBIAN/control"
dpkg-deb --root-owner-group -Zgzip -z1 --build "$work/repack" "$root/tmp/shutter-new.deb" >/dev/null
cp "$deb" "$root/tmp/shutter-old.deb"
# Downloads kept between runs (the Depends: FFmpeg, libcamera, their libraries).
mkdir -p "$cache/apt-archives-$suite-$arch/partial"

unshare --mount --propagation private sh -eu -s "$root" "$cache/apt-archives-$suite-$arch" "$version" "$newer" <<'INNER'
root=$1; archives=$2; version=$3; newer=$4
# A failed check leaves no shutterd behind.
trap 'kill "$(cat "$root/tmp/shutterd.pid" 2>/dev/null)" 2>/dev/null || true' EXIT
mount --bind /proc "$root/proc"
mount --bind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
mount --bind "$archives" "$root/var/cache/apt/archives"
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive"
inroot() { chroot "$root" $E sh -euc "$*"; }
ok() { echo "deb-test: ok   $*"; }
fail() { echo "deb-test: FAIL $*" >&2; exit 1; }
check() { # check WHAT SHELL-CONDITION (run in the root)
    what=$1; shift
    if inroot "$*" >/dev/null 2>&1; then ok "$what"; else fail "$what ($*)"; fi
}
# The sim board: photo, clip, status through the installed programs, as the unit runs it.
capture() { # capture EXPECTED-FIRST-NUMBER VERSION (also sets a runtime setting)
    n=$1; v=$2
    inroot 'install -d -m 0750 -o shutter -g shutter /run/shutter
        runuser -u shutter -- shutterd --board sim --config /etc/shutter/shutter.json \
            > /tmp/shutterd.log 2>&1 &
        echo $! > /tmp/shutterd.pid
        i=0; while [ ! -S /run/shutter/control.sock ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
        [ -S /run/shutter/control.sock ] || { cat /tmp/shutterd.log; exit 1; }' || fail "shutterd --board sim did not start"
    photo=$(printf 'SHTR%04d.JPG' "$n")
    clip=$(printf 'SHTR%04d.MP4' $((n + 1)))
    out=$(inroot 'runuser -u shutter -- shutterctl tap') || fail "shutterctl tap: $out"
    echo "$out" | grep -q "/var/lib/shutter/DCIM/100SHUTR/$photo" || fail "tap gave $out, not $photo"
    ok "installed shutterctl tap -> $photo"
    out=$(inroot 'runuser -u shutter -- shutterctl hold 2') || fail "shutterctl hold 2: $out"
    echo "$out" | grep -q "/var/lib/shutter/DCIM/100SHUTR/$clip" || fail "hold gave $out, not $clip"
    ok "installed shutterctl hold 2 -> $clip"
    out=$(inroot 'runuser -u shutter -- shutterctl set camera.exposure.ev 1') || fail "shutterctl set: $out"
    out=$(inroot 'runuser -u shutter -- shutterctl status')
    echo "$out" | grep -q "\"version\" : \"$v\"" || echo "$out" | grep -q "\"version\":\"$v\"" ||
        fail "status.version is not $v: $(echo "$out" | grep version)"
    ok "status.version $v"
    inroot 'kill -TERM $(cat /tmp/shutterd.pid); i=0; while kill -0 $(cat /tmp/shutterd.pid) 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
        ! kill -0 $(cat /tmp/shutterd.pid) 2>/dev/null && rm /tmp/shutterd.pid' || fail "shutterd did not stop on SIGTERM"
    head -n1 "$root/tmp/shutterd.log" | grep -q "Shutter $v starting" || fail "first log line: $(head -n1 "$root/tmp/shutterd.log")"
    ok "first log line names Shutter $v; stopped on SIGTERM"
}
dcim_sums() { (cd "$root/var/lib/shutter" && find DCIM -type f | LC_ALL=C sort | xargs md5sum; md5sum .shutter-counter); }

s=$(date +%s)
inroot 'apt-get update -q' > "$root/tmp/apt-update.log" 2>&1 || { tail "$root/tmp/apt-update.log"; fail "apt-get update"; }
inroot 'apt-get install -y -q --no-install-recommends /tmp/shutter-old.deb' > "$root/tmp/install.log" 2>&1 ||
    { tail -30 "$root/tmp/install.log"; fail "apt install ./shutter_$version.deb"; }
echo "deb-test: installed with its Depends in $(( $(date +%s) - s )) s ($(grep -c '^Setting up' "$root/tmp/install.log") packages set up)"
check "shutter $version installed" "[ \"\$(dpkg-query -W -f='\${Version} \${Status}' shutter)\" = '$version install ok installed' ]"
check "no Swift runtime on the system" "! ls /usr/lib/*/libswiftCore.so /usr/lib/swift 2>/dev/null"
check "user shutter in groups video, audio, gpio" 'for g in video audio gpio; do id -nG shutter | tr " " "\n" | grep -qx $g; done'
check "shutterd.service enabled (offline)" '[ "$(systemctl is-enabled shutterd.service)" = enabled ]'
check "systemd-analyze verify: the unit and every program it names" 'systemd-analyze verify --man=no shutterd.service'
check "shutterd.socket not enabled" '[ "$(systemctl is-enabled shutterd.socket)" = disabled ]'
check "shutterd-connector.service enabled with shutterd (offline)" '[ "$(systemctl is-enabled shutterd-connector.service)" = enabled ]'
check "shutterd-rtsp.socket not enabled" '[ "$(systemctl is-enabled shutterd-rtsp.socket)" = disabled ]'
check "config root:shutter 0640" '[ "$(stat -c "%U:%G %a" /etc/shutter/shutter.json)" = "root:shutter 640" ]'
check "/var/lib/shutter owned by shutter" '[ "$(stat -c "%U:%G %a" /var/lib/shutter)" = "shutter:shutter 750" ]'
check "shutterd --version" "[ \"\$(shutterd --version)\" = 'shutterd $version' ]"
check "shutterctl --version" "[ \"\$(shutterctl --version)\" = 'shutterctl $version' ]"
# The person's edit: 45 s clips.
sed -i 's/"maxSeconds": 60/"maxSeconds": 45/' "$root/etc/shutter/shutter.json"
grep -q '"maxSeconds": 45' "$root/etc/shutter/shutter.json" || fail "could not edit the config"
config_sum=$(md5sum < "$root/etc/shutter/shutter.json")
capture 1 "$version"
check "EXIF Software names the version" "head -c 4096 /var/lib/shutter/DCIM/100SHUTR/SHTR0001.JPG | grep -aq 'Shutter $version'"
before=$(dcim_sums)

s=$(date +%s)
inroot 'apt-get install -y -q --no-install-recommends /tmp/shutter-new.deb' > "$root/tmp/upgrade.log" 2>&1 ||
    { tail -30 "$root/tmp/upgrade.log"; fail "upgrade to $newer"; }
echo "deb-test: upgraded in $(( $(date +%s) - s )) s"
check "shutter $newer installed" "[ \"\$(dpkg-query -W -f='\${Version}' shutter)\" = '$newer' ]"
[ "$(md5sum < "$root/etc/shutter/shutter.json")" = "$config_sum" ] && ok "upgrade kept the edited config" || fail "upgrade changed the config"
[ "$(dcim_sums)" = "$before" ] && ok "upgrade kept every file in DCIM and the counter" || fail "upgrade changed DCIM or the counter"
check "still enabled after the upgrade" '[ "$(systemctl is-enabled shutterd.service)" = enabled ]'
capture 3 "$version"
after_upgrade=$(dcim_sums)

inroot 'apt-get remove -y -q shutter' > "$root/tmp/remove.log" 2>&1 || { tail -30 "$root/tmp/remove.log"; fail "apt-get remove"; }
check "remove: programs gone" '! [ -e /usr/bin/shutterd ] && ! [ -e /usr/bin/shutterctl ]'
check "remove: config kept" "[ \"\$(md5sum < /etc/shutter/shutter.json)\" = '$config_sum' ]"
[ "$(dcim_sums)" = "$after_upgrade" ] && ok "remove: DCIM and the counter kept" || fail "remove changed DCIM"
check "remove: user kept" 'getent passwd shutter'
check "remove: the unit is not masked" '! [ -L /etc/systemd/system/shutterd.service ]'
check "remove: config-files state" '[ "$(dpkg-query -W -f="\${Status}" shutter)" = "deinstall ok config-files" ]'

check "runtime settings there before the purge" '[ -s /var/lib/shutter/.shutter-settings.json ]'
inroot 'apt-get purge -y -q shutter' > "$root/tmp/purge.log" 2>&1 || { tail -30 "$root/tmp/purge.log"; fail "apt-get purge"; }
check "purge: config gone" '! [ -e /etc/shutter ]'
check "purge: user and group kept (they own the photos)" 'getent passwd shutter && getent group shutter'
check "purge: DCIM still owned by shutter" '[ "$(stat -c %U /var/lib/shutter/DCIM)" = shutter ]'
check "purge: runtime settings gone" '! [ -e /var/lib/shutter/.shutter-settings.json ]'
check "purge: package gone" '! dpkg-query -W -f="\${Status}" shutter 2>/dev/null | grep -q .'
[ "$(dcim_sums)" = "$after_upgrade" ] && ok "purge: every photo and video and the counter kept" || fail "purge touched DCIM"
grep -q "stay in /var/lib/shutter" "$root/tmp/purge.log" && ok "purge says where the photos are" || fail "purge did not say where the photos are"
INNER
echo "deb-test: ok, $suite $arch, $(( $(date +%s) - t0 )) s"
