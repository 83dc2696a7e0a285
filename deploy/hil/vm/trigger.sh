# SPDX-License-Identifier: BSD-2-Clause
# trigger: three trigger inputs on gpio-sim lines besides the button (docs/triggers.md):
# a PIR on GPIO23 (photo, 30 s hold-off) pulsed 3 times, a door contact on GPIO24 (a clip
# while open + 3 s) held open 6 s, a reed contact on GPIO25 (active low, pull-up, photo)
# closed with bounce. The live events, the status and the files are kept for the host.
. /hil/lib.sh
idle() { shutterctl status 2>/dev/null | grep -q '"state" : "idle"'; }
# say WHAT: where the scenario stands, on the console (the host keeps it when a step hangs),
# with the files so far and the service's trigger lines; the disk synced.
say() {
    console "HIL-TRIGGER $*: $(media JPG | wc -l) JPG, $(media MP4 | wc -l) MP4; $(grep -c 'trigger ' "$HIL_OUT/shutterd.log") trigger log lines"
    grep 'trigger \|refused\|capture failed' "$HIL_OUT/shutterd.log" | tail -6 > /dev/console
    sync
}
HIL_CONFIG='"triggers": { "inputs": [
  { "name": "pir", "line": "GPIO23", "action": "photo", "holdOffSeconds": 30 },
  { "name": "door", "line": "GPIO24", "action": "clip", "clipAfterSeconds": 3, "holdOffSeconds": 1 },
  { "name": "reed", "line": "GPIO25", "activeLow": true, "bias": "pull-up", "action": "photo", "holdOffSeconds": 5 } ] }'
step 240 "trigger: shutterd READY"
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
say "ready"
shutterctl events > "$HIL_OUT/events.txt" 2>&1 &
events=$!
sleep 1
step 120 "trigger: PIR pulse train -> one JPEG"
hil-pull "$HIL_GPIO/sim_gpio23/pull" up 500 down 1000 up 500 down 1000 up 500 down > "$HIL_OUT/edges-pir.txt"
wait_media_count JPG 1 60 || echo "no JPEG from the PIR within 60 s"
sleep 4    # a second, wrong photo would have landed by now
wait_for 60 idle || echo "not idle 60 s after the PIR"
say "after the PIR"
step 300 "trigger: door open 6 s -> one clip"
hil-pull "$HIL_GPIO/sim_gpio24/pull" up 6000 down > "$HIL_OUT/edges-door.txt"
wait_media_count MP4 1 60 || echo "no clip from the door within 60 s"
n=0
until grep -q 'durable: .* complete' "$HIL_OUT/shutterd.log"; do
    n=$((n + 1)); [ $n -ge 300 ] && { echo "clip not complete 150 s after the door closed"; break; }
    usleep 500000
done
wait_for 60 idle || echo "not idle 60 s after the door's clip"
say "after the door"
step 120 "trigger: bouncing reed contact -> one JPEG"
hil-pull "$HIL_GPIO/sim_gpio25/pull" down 1 up 2 down 1 up 3 down 2000 up 2 down 1 up 3 down 1 up > "$HIL_OUT/edges-reed.txt"
wait_media_count JPG 2 60 || echo "no JPEG from the reed contact within 60 s"
sleep 4
wait_for 60 idle || echo "not idle 60 s after the reed contact"
shutterctl status > "$HIL_OUT/status.json" 2>&1
say "after the reed"
step 60 "trigger: shutterd stop"
kill "$events" 2>/dev/null
shutterd_stop
media > "$HIL_OUT/media.txt"
