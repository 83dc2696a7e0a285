# SPDX-License-Identifier: BSD-2-Clause
# hold: the loopback tone plays while the button is held ~3 s -> one MP4 (H.264 + AAC).
. /hil/lib.sh
led_sampler_start
step 240 "hold: shutterd READY"
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
tone_start
sleep 2
step 90 "hold: 3 s hold -> MP4"
press; sleep 3; release
wait_media_count MP4 1 60
# Under emulation the software encoder finishes the clip long after the release (it runs
# seconds behind the camera); stop only once the recorder reports the file complete, so the
# outcome does not depend on the emulator's speed. (A SIGTERM during that finish loses the
# clip's tail today: the service exits without waiting for a clip it is already finishing.)
step 240 "hold: clip complete"
n=0
until grep -q 'durable: .* complete' "$HIL_OUT/shutterd.log"; do
    n=$((n + 1)); [ $n -ge 360 ] && { echo "clip not complete 180 s after the release"; break; }
    usleep 500000
done
sleep 2
step 60 "hold: shutterd stop"
shutterd_stop
tone_stop
led_sampler_stop
media > "$HIL_OUT/media.txt"
