#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The package's units under a real systemd (issue 41): what a person who installs the
# package gets, booted, not run by hand.
#   test-units.sh DEB
# A copy of the clean bookworm root (make-root.sh) gets systemd, Mosquitto (the person's
# broker) and `apt install ./DEB`, then the person's steps: mqtt and live.rtsp enabled in
# /etc/shutter/shutter.json, `systemctl enable shutterd-rtsp.socket`. No camera here: the
# installed shutterd finds no Pi and runs the simulated board, as the unit starts it.
# `systemd-nspawn -b --private-network` boots it: systemd is PID 1, the units are the
# package's. Then, from inside the container's network (this machine's ffprobe and
# mosquitto clients, run in it):
#   - shutterd.service active with the package's sandbox (PrivateNetwork=yes), and
#     `systemd-analyze security shutterd` at 0.7, where it was; the connector's printed;
#   - MQTT through shutterd-connector.service: online, a command's photo, its event;
#   - an RTSP viewer plays H.264 from shutterd-rtsp.socket, over TCP and with UDP asked
#     for first (461, then TCP);
#   - uploads through the connector (docs/uploads.md's steps: /etc/shutter/rclone.conf readable
#     by the group shutter, upload.enabled): the photo reaches an SFTP server (this machine's
#     `rclone serve sftp` in the container's network), byte for byte, its record verified;
#   - with the socket disabled, the journal and `status` say which two commands fix it.
# Prints each check and the time. Root only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
deb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ "$(id -u)" -eq 0 ] || { echo "units-test: run as root" >&2; exit 1; }
command -v systemd-nspawn >/dev/null || { echo "units-test: no systemd-nspawn (deploy/deb/install-deps.sh installs systemd-container)" >&2; exit 1; }
for tool in ffprobe mosquitto_sub mosquitto_pub nsenter python3 rclone; do
    command -v "$tool" >/dev/null || { echo "units-test: no $tool here (the viewer and clients run from this machine): make test-deps installs it" >&2; exit 1; }
done
t0=$(date +%s)
base=$(sh "$here/make-root.sh" bookworm amd64)
cache=${DEB_ROOT_CACHE:-/var/cache/shutter-deb}
work=$(mktemp -d /var/tmp/shutter-units-test.XXXXXX)
nspawn=
leader=
nas=
cleanup() {
    [ -n "$nas" ] && kill "$nas" 2>/dev/null
    if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
        [ -n "$leader" ] && kill -s RTMIN+4 "$leader" 2>/dev/null  # PID 1's poweroff
        i=0; while kill -0 "$nspawn" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
        kill -9 "$nspawn" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
root="$work/root"
cp -a "$base" "$root"
cp /etc/resolv.conf "$root/etc/"
cp "$deb" "$root/tmp/shutter.deb"
mkdir -p "$cache/apt-archives-bookworm-amd64/partial"
ok() { echo "units-test: ok   $*"; }
fail() {
    echo "units-test: FAIL $*" >&2
    if [ -n "$leader" ]; then
        inct systemctl status --no-pager shutterd.service shutterd-connector.service shutterd-rtsp.socket >&2 2>&1 || true
        journal -n 80 >&2 2>&1 || true
    fi
    exit 1
}

# Install: systemd (minbase has none) and the package with its Depends.
s=$(date +%s)
unshare --mount --propagation private sh -eu -s "$root" "$cache/apt-archives-bookworm-amd64" <<'INNER' || fail "apt install systemd ./shutter.deb (log: the lines above)"
root=$1; archives=$2
mount --bind /proc "$root/proc"
mount --bind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
mount --bind "$archives" "$root/var/cache/apt/archives"
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive"
chroot "$root" $E apt-get update -q > "$root/tmp/apt.log" 2>&1 || { tail -20 "$root/tmp/apt.log"; exit 1; }
# rclone: the package recommends it (a person's apt installs it; this one installs none).
chroot "$root" $E apt-get install -y -q --no-install-recommends systemd systemd-sysv dbus mosquitto rclone /tmp/shutter.deb \
    >> "$root/tmp/apt.log" 2>&1 || { tail -30 "$root/tmp/apt.log"; exit 1; }
INNER
ok "systemd, Mosquitto and the package installed ($(( $(date +%s) - s )) s)"

# The person's steps (docs/home-automation.md): their edits to the package's config.
python3 - "$root/etc/shutter/shutter.json" <<'PY'
import json, sys
path = sys.argv[1]
c = json.load(open(path))
c.setdefault("video", {}).update({"width": 640, "height": 360, "prerollSeconds": 2})
c["mqtt"] = {"enabled": True, "url": "mqtt://127.0.0.1:1883", "name": "garden"}
c["live"] = {"rtsp": {"enabled": True, "open": True}}
c["upload"] = {"enabled": True, "remote": "nas:camera/garden"}
json.dump(c, open(path, "w"), indent=2)
PY
# docs/uploads.md: the remote in /etc/shutter/rclone.conf, readable by the service.
printf '[nas]\ntype = sftp\nhost = 127.0.0.1\nport = 2222\nuser = cam\npass = %s\n' "$(rclone obscure p4ss)" \
    > "$root/etc/shutter/rclone.conf"
chroot "$root" chgrp shutter /etc/shutter/rclone.conf && chmod 640 "$root/etc/shutter/rclone.conf" ||
    fail "chgrp shutter /etc/shutter/rclone.conf"
# The journal in memory only (this root is thrown away): no flush to /var/log/journal
# under way while the checks read it (one run read no entries at all during one).
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' > "$root/etc/systemd/journald.conf.d/volatile.conf"
systemctl --root="$root" enable shutterd-rtsp.socket >/dev/null 2>&1 || fail "systemctl enable shutterd-rtsp.socket"
# A container has no console to log in on.
systemctl --root="$root" mask console-getty.service getty@.service >/dev/null 2>&1 || true

# Boot.
s=$(date +%s)
systemd-nspawn -q -b --register=no --keep-unit --private-network -D "$root" --console=pipe \
    > "$work/console.log" 2>&1 < /dev/null &
nspawn=$!
i=0
while [ -z "$leader" ] && [ $i -lt 600 ]; do
    for p in $(pgrep -f "^/sbin/init|^/lib/systemd/systemd" 2>/dev/null); do
        # The container's PID 1: a child of systemd-nspawn (directly or through its one helper).
        parent=$(ps -o ppid= -p "$p" | tr -d ' ')
        grand=$(ps -o ppid= -p "$parent" 2>/dev/null | tr -d ' ')
        if [ "$parent" = "$nspawn" ] || [ "$grand" = "$nspawn" ]; then leader=$p; fi
    done
    [ -n "$leader" ] || { kill -0 "$nspawn" 2>/dev/null || { cat "$work/console.log" >&2; fail "systemd-nspawn ended"; }; sleep 0.1; i=$((i+1)); }
done
[ -n "$leader" ] || fail "no systemd in the container after 60 s"
inct() { nsenter -t "$leader" -m -u -i -n -p -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
innet() { nsenter -t "$leader" -n -- "$@"; }  # this machine's programs, the container's network
# The journal's files by name: `journalctl -b` alone read no entries in some boots (its
# machine id and the journal directory's did not match yet).
journal() { inct journalctl --no-pager --file '/run/log/journal/*/*.journal' "$@"; }
i=0
until inct systemctl is-active -q shutterd.service 2>/dev/null || [ $i -ge 1200 ]; do sleep 0.1; i=$((i+1)); done
inct systemctl is-active -q shutterd.service || fail "shutterd.service not active 120 s after the boot: $(inct systemctl status --no-pager shutterd 2>&1 | head -20)"
ok "booted with systemd as PID 1; shutterd.service active $(( $(date +%s) - s )) s after the start"
[ "$(inct systemctl show -p PrivateNetwork --value shutterd.service)" = yes ] && ok "shutterd runs with PrivateNetwork=yes" || fail "PrivateNetwork is not yes"
exposure=$(inct systemd-analyze security --no-pager shutterd.service 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ "$exposure" = 0.7 ] && ok "systemd-analyze security shutterd: $exposure (as before)" || fail "systemd-analyze security shutterd: '$exposure', not 0.7"
inct systemctl is-active -q shutterd-rtsp.socket && ok "shutterd-rtsp.socket active" || fail "shutterd-rtsp.socket not active"
connector=$(inct systemd-analyze security --no-pager shutterd-connector.service 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
ok "systemd-analyze security shutterd-connector (it has the network): $connector"

# MQTT, through the connector: a broker in the container, a subscriber and a command in its network.
i=0
until inct systemctl is-active -q shutterd-connector.service 2>/dev/null || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
inct systemctl is-active -q shutterd-connector.service && ok "shutterd-connector.service active (started with shutterd)" ||
    fail "shutterd-connector.service not active: $(journal -u shutterd-connector | tail -n 20)"
out=$(innet timeout 60 mosquitto_sub -h 127.0.0.1 -t shutter/garden/availability -C 1 -W 60 2>&1) || fail "no availability on the broker: $out"
[ "$out" = online ] && ok "MQTT: shutter/garden/availability $out (retained, from the connector)" || fail "availability: $out"
innet sh -c 'timeout 60 mosquitto_sub -h 127.0.0.1 -t shutter/garden/event -C 1 -W 60 > '"$work"'/event.json 2>&1 & sleep 1
    mosquitto_pub -h 127.0.0.1 -t shutter/garden/command -m photo; wait' || fail "no event after the command: $(cat "$work/event.json")"
grep -q '"event_type":"photo"' "$work/event.json" && ok "MQTT: a photo command, its event: $(head -c 160 "$work/event.json")" ||
    fail "event: $(cat "$work/event.json")"
name=$(sed -n 's/.*"name":"\([^"]*\)".*/\1/p' "$work/event.json")
[ -n "$name" ] && [ -f "$root/var/lib/shutter/DCIM/100SHUTR/$name" ] && ok "MQTT: $name on the card" || fail "no $name on the card"
# Uploads, through the connector: the NAS is this machine's rclone serving $work/nas in the
# container's network; the photo the command took goes there.
mkdir -p "$work/nas"
# nsenter runs rclone itself (no subshell between): $! is the server, killed at the end.
nsenter -t "$leader" -n -- rclone serve sftp "$work/nas" --addr 127.0.0.1:2222 --user cam --pass p4ss > "$work/nas.log" 2>&1 &
nas=$!
i=0
# Its final name only (a copy under .shutter-incoming/ is not one yet).
final() { find "$work/nas/camera/garden" -path '*/.shutter-incoming' -prune -o -name "$name" -print 2>/dev/null | head -n 1; }
until [ -n "$(final)" ] || [ $i -ge 600 ]; do sleep 0.1; i=$((i+1)); done
copy=$(final)
[ -n "$copy" ] || fail "the photo did not reach the SFTP server in 60 s: $(journal -u shutterd-connector | tail -n 20)"
card=$(sha256sum "$root/var/lib/shutter/DCIM/100SHUTR/$name" | cut -c1-64)
[ "$(sha256sum "$copy" | cut -c1-64)" = "$card" ] && ok "uploads: $name on the NAS (${copy#"$work/nas/"}), byte for byte" ||
    fail "uploads: the copy differs from the card's $name"
i=0
until inct runuser -u shutter -- shutterctl upload status 2>/dev/null | grep -q '"waitingFiles" : 0' || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
up=$(inct runuser -u shutter -- shutterctl upload status 2>&1 | tr -d ' \n')
echo "$up" | grep -q '"waitingFiles":0' && echo "$up" | grep -q '"verifiedFiles":[1-9]' &&
    ok "uploads: shutterctl upload status: $(echo "$up" | grep -o '"verifiedFiles":[0-9]*'), nothing waiting" ||
    fail "uploads: status: $up"
grep -q '"state":"verified"' "$root"/var/lib/shutter/.upload/*.json && ok "uploads: the queue's record on the card says verified" ||
    fail "uploads: no verified record in /var/lib/shutter/.upload"
kill "$nas" 2>/dev/null || true
nas=
rss() { inct sh -c "grep VmRSS /proc/\$(systemctl show -p MainPID --value $1)/status" | tr -s ' \t' ' ' | cut -d' ' -f2; }
echo "units-test: resident: shutterd $(( $(rss shutterd.service) / 1024 )) MiB, the connector $(( $(rss shutterd-connector.service) / 1024 )) MiB"

# An RTSP viewer.
i=0
until journal -u shutterd 2>/dev/null | grep -q "live video on the socket systemd passed" || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
journal -u shutterd | grep -q "live video on the socket systemd passed (shutterd-rtsp.socket, port 8554)" &&
    ok "the journal: live video on the socket systemd passed" || fail "no 'live video on the socket systemd passed' in the journal"
for transport in tcp default; do
    if [ $transport = tcp ]; then args="-rtsp_transport tcp"; else args=""; fi
    # shellcheck disable=SC2086
    out=$(innet timeout 30 ffprobe -v error $args -show_entries stream=codec_name,width,height -of csv=p=0 \
        rtsp://127.0.0.1:8554/live 2>&1) || fail "ffprobe ($transport) in the container's network: $out"
    echo "$out" | grep -q "^h264,640,360" || fail "ffprobe ($transport): $out"
    ok "an RTSP viewer ($transport$( [ $transport = default ] && echo ": UDP asked first, 461, then TCP")) plays $(echo "$out" | tr '\n' ' ')"
done

# Without the socket: the fix said where the person looks.
inct systemctl disable -q --now shutterd-rtsp.socket || fail "systemctl disable --now shutterd-rtsp.socket"
inct systemctl restart shutterd.service || fail "systemctl restart shutterd"
i=0
until journal -u shutterd | grep -q "systemctl enable --now shutterd-rtsp.socket" || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
line=$(journal -u shutterd | grep "live RTSP not started" | tail -n 1)
echo "$line" | grep -q "systemctl enable --now shutterd-rtsp.socket" && echo "$line" | grep -q "systemctl restart shutterd" &&
    ok "without the socket the journal says: ${line#*: }" || fail "no fix in the journal: '$line'"
last=$(inct runuser -u shutter -- shutterctl status 2>/dev/null | grep '"lastError"' || true)
echo "$last" | grep -q "shutterd-rtsp.socket" && ok "status: $last" || fail "status.lastError does not say it: '$last'"

echo "units-test: passed in $(( $(date +%s) - t0 )) s"
