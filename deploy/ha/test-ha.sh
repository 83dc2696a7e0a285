#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Shutter against a real Home Assistant (issue 41; `make ha-test`, not part of `make test`).
#   test-ha.sh [SHUTTERD]     (default: .build/debug/shutterd, built by `make ha-test`)
# 1. A Python venv with Home Assistant 2024.3.3 (the newest that runs on Debian 12's Python
#    3.11) and the requirements of the integrations it loads here, from PyPI, cached in
#    $HA_CACHE/venv-2024.3.3 (default /var/cache/shutter-ha): later runs reuse it.
# 2. Mosquitto on a free port of 127.0.0.1 (one user, as Home Assistant's add-on makes).
# 3. Home Assistant (`hass -c` a fresh config directory: homeassistant, http on a free port
#    of 127.0.0.1, api); then Tests/ha/ha_check.py: onboarding's user and a token, the MQTT
#    integration through its config flow, shutterd on the simulated board with MQTT to the
#    broker (name "garden", the per-entity discovery form), the device and its entities each
#    acting on the camera, the docs' recipe, a reload of the MQTT entry, the state sensor
#    following a clip, shutterd's restarts, and Home Assistant's warnings about the camera
#    (any fails the run).
# Prints each step and its time; stops everything it started. HA_TEST_KEEP=1 keeps the work
# directory (logs, card, config) for a look afterwards.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
shutterd=${1:-$root/.build/debug/shutterd}
version=2024.3.3
cache=${HA_CACHE:-/var/cache/shutter-ha}
venv=$cache/venv-$version
py=/usr/bin/python3
name=garden
t0=$(date +%s)
[ -x "$shutterd" ] || { echo "ha-test: no $shutterd (swift build --product shutterd)" >&2; exit 1; }
for tool in /usr/sbin/mosquitto /usr/bin/mosquitto_passwd "$py"; do
    [ -x "$tool" ] || { echo "ha-test: no $tool (deploy/ha/install-deps.sh)" >&2; exit 1; }
done

# 1. The venv. `.complete` is written last: a run stopped halfway starts it again.
if [ -f "$venv/.complete" ]; then
    echo "ha-test: Home Assistant $version: the cached venv $venv"
else
    s=$(date +%s)
    echo "ha-test: installing Home Assistant $version into $venv (from PyPI, a few minutes)"
    rm -rf "$venv"
    mkdir -p "$cache"
    "$py" -m venv "$venv"
    constraints=$root/Tests/ha/constraints-$version.txt
    nice -n 10 "$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" "homeassistant==$version"
    # What Home Assistant would otherwise pip-install at its first start (the frontend,
    # MQTT's paho-mqtt, …), with its own constraints.
    "$venv/bin/python" "$root/Tests/ha/ha_check.py" requirements > "$venv/requirements.txt"
    nice -n 10 "$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" \
        -c "$venv/lib/python3.11/site-packages/homeassistant/package_constraints.txt" \
        -r "$venv/requirements.txt"
    touch "$venv/.complete"
    echo "ha-test: installed in $(( $(date +%s) - s )) s ($(du -sm "$venv" | cut -f1) MiB)"
fi

work=$(mktemp -d /var/tmp/shutter-ha-test.XXXXXX)
broker_pid=
hass_pid=
# Stops what this script started: SIGTERM, up to 30 s, then SIGKILL.
stop() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || return 0
    i=0
    while kill -0 "$1" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$1" 2>/dev/null || true
}
cleanup() {
    status=$?
    stop "$hass_pid"
    # shutterd is the driver's (started after the MQTT integration, restarted once); should
    # the driver have died, its pid file says which process to stop.
    [ -f "$work/shutterd.pid" ] && stop "$(cat "$work/shutterd.pid")"
    stop "$broker_pid"
    if [ "${HA_TEST_KEEP:-0}" = 1 ]; then echo "ha-test: kept $work"; else rm -rf "$work"; fi
    echo "ha-test: total $(( $(date +%s) - t0 )) s"
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() {
    "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# 2. Mosquitto, as MQTTBroker (Tests/ShutterServiceTests) starts it, and shutterd's
#    configuration (the driver starts shutterd once the MQTT integration is in).
broker_port=$(free_port)
user=shutter
head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/broker-password"
mosquitto_passwd -c -b "$work/users" "$user" "$(cat "$work/broker-password")"
{
    [ "$(id -u)" -eq 0 ] && echo "user root"
    echo "listener $broker_port 127.0.0.1"
    echo "allow_anonymous false"
    echo "password_file $work/users"
    echo "persistence false"
    echo "log_dest file $work/broker.log"
} > "$work/mosquitto.conf"
/usr/sbin/mosquitto -c "$work/mosquitto.conf" >/dev/null 2>&1 &
broker_pid=$!
i=0
until mosquitto_pub -h 127.0.0.1 -p "$broker_port" -u "$user" -P "$(cat "$work/broker-password")" -t probe -n 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "ha-test: FAIL mosquitto did not start" >&2; exit 1; }
    sleep 0.1
done
echo "ha-test: ok   mosquitto on 127.0.0.1:$broker_port"

mkdir -p "$work/card"
# The board's health as a Pi shows it (this machine has neither file): a thermal zone at
# 51.234 °C and the firmware's throttled flags 0x50005 (under-voltage and throttling now).
export SHUTTER_SYSFS_ROOT="$work/sys"
mkdir -p "$work/sys/class/thermal/thermal_zone0" "$work/sys/devices/platform/soc/soc:firmware"
echo 51234 > "$work/sys/class/thermal/thermal_zone0/temp"
echo 50005 > "$work/sys/devices/platform/soc/soc:firmware/get_throttled"
# The per-entity discovery form: Home Assistant 2024.3 predates the device form (2024.11).
cat > "$work/shutter.json" <<EOF
{"mqtt": {"enabled": true, "url": "mqtt://127.0.0.1:$broker_port", "username": "$user",
          "passwordFile": "$work/broker-password", "name": "$name", "discoveryForm": "entity"},
 "audio": {"enabled": false}, "video": {"width": 640, "height": 360}}
EOF
echo "ha-test: shutterd: $("$shutterd" --version), its configuration $work/shutter.json"

# 3. Home Assistant: a fresh configuration, only what the test needs (no default_config:).
ha_port=$(free_port)
mkdir -p "$work/ha"
cat > "$work/ha/configuration.yaml" <<EOF
homeassistant:
  name: Shutter test
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: NL
http:
  server_host: 127.0.0.1
  server_port: $ha_port
api:
automation: !include automations.yaml
notify:
  - name: mobile_app_your_phone
    platform: file
    filename: notify.txt
EOF
# docs/home-automation.md's recipe, as a person pastes it; the phone's notifier is a file.
awk '/<!-- ha-test: recipe/ { on = 1; next } on && /^```yaml/ { inblock = 1; next } inblock && /^```/ { exit }
     inblock { print }' "$root/docs/home-automation.md" > "$work/ha/automations.yaml"
grep -q "platform: state" "$work/ha/automations.yaml" || { echo "ha-test: FAIL no recipe in docs/home-automation.md"; exit 1; }
s=$(date +%s)
nice -n 10 "$venv/bin/hass" -c "$work/ha" > "$work/hass.out" 2>&1 &
hass_pid=$!
echo "ha-test: Home Assistant started (http://127.0.0.1:$ha_port, config $work/ha)"
rc=0
"$venv/bin/python" "$root/Tests/ha/ha_check.py" run --ha "http://127.0.0.1:$ha_port" \
    --config-dir "$work/ha" --broker-port "$broker_port" --broker-user "$user" \
    --broker-password-file "$work/broker-password" --card "$work/card" --name "$name" \
    --hass-pid "$hass_pid" --shutterd-pidfile "$work/shutterd.pid" --shutterd-log "$work/shutterd.log" \
    -- "$shutterd" --board sim --storage "$work/card" --control-socket "$work/c.sock" \
    --config "$work/shutter.json" || rc=$?
echo "ha-test: Home Assistant's part took $(( $(date +%s) - s )) s"
if [ $rc -ne 0 ]; then
    kill -0 "$hass_pid" 2>/dev/null || { echo "ha-test: Home Assistant exited; its output:"; tail -n 30 "$work/hass.out"; }
    echo "ha-test: shutterd's log (the last lines):"
    tail -n 20 "$work/shutterd.log" 2>/dev/null || true
fi
exit $rc
