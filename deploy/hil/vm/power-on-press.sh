# SPDX-License-Identifier: BSD-2-Clause
# power-on-press: the button is already held when shutterd starts (a press from power-off:
# pulled down before the service exists), and let go once the service says it saw it held.
# The photo is taken at the camera's first frame. Writes timing.txt: the kernel's start (0),
# the service's start, the held button seen, READY and the durable photo, in ms since boot.
. /hil/lib.sh
# A long hold threshold: the emulator may be slow to let go, and this is the tap's case.
# The line's bias as-is (GPIO3, the wake pin, has the board's own pull-up): a pull-up asked by
# the service would be applied by gpio-sim over the scenario's pull-down, releasing the button.
HIL_CONFIG='"button": { "holdMs": 5000 }, "gpio": { "buttonBias": "as-is" }, "audio": { "enabled": false }'
led_sampler_start
step 240 "power-on-press: the button held, shutterd started"
press
started=$(now_ms)
shutterd_start
wait_for 120 grep -q "held as the service starts" "$HIL_OUT/shutterd.log" || echo "the service never said it saw the button held"
seen=$(now_ms)
release
step 240 "power-on-press: the photo durable"
wait_media_count JPG 1 180 || echo "no photo 180 s after the release"
durable=${HIL_T:-}
wait_ready 60 || echo "not READY"
sleep 2
step 60 "power-on-press: shutterd stop"
shutterd_stop
led_sampler_stop
echo "start $started seen $seen durable ${durable:-none}" > "$HIL_OUT/timing.txt"
media > "$HIL_OUT/media.txt"
