# SPDX-License-Identifier: BSD-2-Clause
# Helpers for the VM-side scenario scripts (sourced). $HIL_GPIO is the gpio-sim chip's
# sysfs directory, $HIL_OUT the scenario's output directory on the data disk.

# now_ms: milliseconds since boot (CLOCK_BOOTTIME via /proc/uptime, 10 ms steps, no fork).
now_ms() {
    read -r _up _idle < /proc/uptime
    _s=${_up%.*}; _c=${_up#*.}
    echo $(( _s * 1000 + ${_c#0} * 10 ))
}

# Button (active low, pull-up): press = pull the line down.
press()   { echo pull-down > "$HIL_GPIO/sim_gpio17/pull"; echo "$(now_ms) press" >> "$HIL_OUT/button.log"; }
release() { echo pull-up > "$HIL_GPIO/sim_gpio17/pull"; echo "$(now_ms) release" >> "$HIL_OUT/button.log"; }

# tap_exact: a 200 ms press timed by hil-pull: a shell's usleep can stretch past the 1 s hold
# time when the emulator is starved of CPU, and the photo would become a clip.
tap_exact() {
    echo "$(now_ms) press" >> "$HIL_OUT/button.log"
    hil-pull "$HIL_GPIO/sim_gpio17/pull" down 200 up >> "$HIL_OUT/edges.txt"
    echo "$(now_ms) release" >> "$HIL_OUT/button.log"
}

# led_sampler_start: logs "ms status flash" to $HIL_OUT/led.log whenever either LED changes.
led_sampler_start() {
    (
        last=""
        while :; do
            read -r s < "$HIL_GPIO/sim_gpio27/value"
            read -r f < "$HIL_GPIO/sim_gpio22/value"
            if [ "$s $f" != "$last" ]; then
                echo "$(now_ms) $s $f" >> "$HIL_OUT/led.log"
                last="$s $f"
            fi
            usleep 5000
        done
    ) &
    HIL_SAMPLER=$!
}
led_sampler_stop() { [ -n "${HIL_SAMPLER:-}" ] && kill "$HIL_SAMPLER" 2>/dev/null; }

# wait_for TIMEOUT_S COMMAND...: runs COMMAND every 50 ms until it succeeds; 1 on timeout.
wait_for() {
    _deadline=$(( $(now_ms) + $1 * 1000 )); shift
    while ! "$@" 2>/dev/null; do
        [ "$(now_ms)" -ge "$_deadline" ] && return 1
        usleep 50000
    done
    return 0
}

# tone_start: plays the test tone into the loopback card's playback side (the "microphone"
# the service records is its capture side, hw:Loopback,1,0).
tone_start() { aplay -q -D hw:Loopback,0,0 /hil/tone.wav > "$HIL_OUT/aplay.log" 2>&1 & HIL_TONE=$!; }
tone_stop()  { [ -n "${HIL_TONE:-}" ] && kill "$HIL_TONE" 2>/dev/null; }

# shutterd_start [ARGS...]: starts the service on the qemu board with its storage on the data
# disk; its stderr goes to shutterd.log. sd_notify messages are received on a socket and
# logged with their time to notify.log ("ms READY=1" ...), the start time first.
shutterd_start() {
    rm -f /run/hil-notify.sock
    # One child per datagram: datagrams carry no trailing newline, so a stream would glue them.
    socat -u UNIX-RECVFROM:/run/hil-notify.sock,fork SYSTEM:"sh /hil/notify-line.sh" \
        2>> "$HIL_OUT/socat.log" &
    wait_for 10 test -S /run/hil-notify.sock
    # The config file: the scenario's sections ($HIL_CONFIG) and, to prove a check can fail,
    # the deliberate breakage named by hil.break= (it wins over a scenario section it shares).
    _b=""
    case "${HIL_BREAK:-}" in
        "") ;;
        polarity) _b='"button": { "activeLow": false }' ;;
        no-debounce) _b='"button": { "stabilityMs": 0 }' ;;
        no-audio) _b='"audio": { "enabled": false }' ;;
        no-flash) _b='"flash": { "mode": "off" }' ;;
        no-status-led) _b='"gpio": { "statusLed": "" }' ;;
        stall) ;;
        *) echo "unknown hil.break=$HIL_BREAK" ;;
    esac
    _c=${HIL_CONFIG:-}
    if [ -n "$_b" ]; then
        [ -n "$_c" ] && [ "${_c%%:*}" = "${_b%%:*}" ] && _c=""
        _c=${_c:+$_c, }$_b
    fi
    echo "{ $_c }" > /tmp/hil-config.json
    echo "$(now_ms) START" >> "$HIL_OUT/notify.log"
    NOTIFY_SOCKET=/run/hil-notify.sock shutterd --board qemu --storage /mnt/data --log-level info \
        --config /tmp/hil-config.json "$@" >> "$HIL_OUT/shutterd.log" 2>&1 &
    HIL_SHUTTERD=$!
}
# wait_ready TIMEOUT_S [N]: until the service sent READY=1 (the Nth time, for a service started
# again in the same boot; default 1), or (no $NOTIFY_SOCKET support) logged "READY:"; the time
# it was first seen is then added to notify.log. Polls every 20 ms.
wait_ready() {
    _deadline=$(( $(now_ms) + $1 * 1000 ))
    until [ "$(grep -c 'READY=1' "$HIL_OUT/notify.log" 2>/dev/null)" -ge "${2:-1}" ]; do
        if [ "${2:-1}" = 1 ] && grep -q 'READY:' "$HIL_OUT/shutterd.log" 2>/dev/null; then
            echo "$(now_ms) READY=1 (from the log)" >> "$HIL_OUT/notify.log"
            return 0
        fi
        [ "$(now_ms)" -ge "$_deadline" ] && return 1
        usleep 20000
    done
}
# shutterd_stop: SIGTERM (the service finishes an open clip), then waits up to 30 s.
shutterd_stop() {
    kill -TERM "$HIL_SHUTTERD" 2>/dev/null
    wait_for 30 sh -c "! kill -0 $HIL_SHUTTERD" || { echo "shutterd ignored SIGTERM"; kill -9 "$HIL_SHUTTERD"; }
    wait "$HIL_SHUTTERD" 2>/dev/null; echo "shutterd exit $?" >> "$HIL_OUT/notify.log"
}
# media [EXT]: the service's files (DCIM/100SHUTR/SHTR*.EXT), one per line.
media() {
    if [ -n "${1:-}" ]; then ls /mnt/data/DCIM/*/SHTR*."$1" 2>/dev/null; else ls /mnt/data/DCIM/*/SHTR* 2>/dev/null; fi
}
# wait_media_count EXT N TIMEOUT_S: until at least N files with that extension exist; polls
# every 10 ms and records in $HIL_T the ms at which the count was reached.
wait_media_count() {
    _deadline=$(( $(now_ms) + $3 * 1000 ))
    while [ "$(media "$1" | wc -l)" -lt "$2" ]; do
        [ "$(now_ms)" -ge "$_deadline" ] && return 1
        usleep 10000
    done
    HIL_T=$(now_ms)
}
# photo_reported MOMENT: `shutterctl status` reports a photo taken at MOMENT (lastPhoto.moment:
# press, focused) and video frames after it (lastPhoto.videoGapMs, the longest frame interval
# since the photo began, is measured once video runs again: after a mode switch, later).
photo_reported() {
    _st=$(shutterctl status 2>&1)
    echo "$_st" | grep -q "\"moment\" *: *\"$1\"" && ! echo "$_st" | grep -q '"videoGapMs" *: *0[^.0-9]*$'
}
# wait_photo_reported MOMENT TIMEOUT_S: until photo_reported. The report lands once the file
# is durable, after it shows in DCIM, and the gap after video resumes: a fixed sleep there
# fails on a loaded machine.
wait_photo_reported() { wait_for "$2" photo_reported "$1" || echo "status never reported the $1 photo (with frames after it) within $2 s"; }
# console MSG: a line on the serial console, which the host watches (power-cut timing).
console() { echo "$*" > /dev/console; }
# step SECONDS NAME...: the scenario's next step, bounded: the host (host-lib.sh hil_boot)
# kills the VM when the step still runs after SECONDS and names it as the one that hung.
# Bounds sit above the waits inside the step, which say what they waited for first.
# hil.break=stall: the first step announces a 20 s bound and hangs, to see the host name it.
step() {
    _b=$1; shift
    [ "${HIL_BREAK:-}" = stall ] && _b=20
    console "HIL-STEP $_b $*"; echo "$(now_ms) step $*" >> "$HIL_OUT/steps.log"
    [ "${HIL_BREAK:-}" = stall ] && sleep 100000
}
