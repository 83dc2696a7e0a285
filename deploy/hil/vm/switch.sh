# SPDX-License-Identifier: BSD-2-Clause
# switch (libcamera 0.7.1): camera switches between real libcamera cameras: vimc (camera 0)
# -> the virtual Virtual0 (next) -> Virtual1 (next) -> vimc (0), a photo on Virtual0; then a
# switch to Virtual2, whose 49.8 MB buffers exceed the udmabuf limit the host set, so it
# cannot start: the reply must say why and vimc must run again (a photo after it).
. /hil/lib.sh
cam -l > "$HIL_OUT/cam-list.txt" 2>&1
HIL_CONFIG='"video": { "width": 1280, "height": 720, "fps": 10 }'
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
shutterctl camera > "$HIL_OUT/cameras.json" 2>&1
# sw LABEL ARG: `shutterctl camera ARG`, its reply, its time (the reply comes once the new
# camera's frames arrive) and the status a second later.
sw() {
    t=$(now_ms)
    shutterctl camera "$2" > "$HIL_OUT/switch-$1.json" 2>> "$HIL_OUT/shutterctl.err"
    echo "$1 $(( $(now_ms) - t ))" >> "$HIL_OUT/switch-ms.txt"
    sleep 1
    shutterctl status > "$HIL_OUT/status-$1.json" 2>&1
}
sw virtual0 next
shutterctl tap > "$HIL_OUT/tap-virtual0.json" 2>> "$HIL_OUT/shutterctl.err"
sw virtual1 next
sw back 0
sw fails 3
sleep 1
shutterctl tap > "$HIL_OUT/tap-after-fail.json" 2>> "$HIL_OUT/shutterctl.err"
sleep 1
shutterctl status > "$HIL_OUT/status-end.json" 2>&1
shutterd_stop
media > "$HIL_OUT/media.txt"
