# SPDX-License-Identifier: BSD-2-Clause
# tap: one boot, the service started twice: with `still.moment` press (the default), then
# focused; a 200 ms press each -> one JPEG each; times each edge -> file and keeps the
# service's status after each photo (its moment and press -> exposure).
. /hil/lib.sh
# What the camera itself reports per frame (the EXIF check depends on it).
step 240 "tap: cam --metadata"
cam -c 1 --capture=2 --metadata > "$HIL_OUT/cam-metadata.txt" 2>&1
led_sampler_start
n=0
for moment in press focused; do
    n=$((n + 1))
    HIL_CONFIG="\"still\": { \"moment\": \"$moment\" }"
    step 240 "tap ($moment): shutterd READY"
    shutterd_start
    wait_ready 180 "$n" || echo "not READY after 180 s ($moment)"
    sleep 2
    step 90 "tap ($moment): press -> JPEG"
    t=$(now_ms); press; usleep 200000; release
    wait_media_count JPG "$n" 60 && echo "$moment edge_to_jpeg_ms $(( HIL_T - t ))" >> "$HIL_OUT/timing.txt"
    step 60 "tap ($moment): the photo in shutterctl status"
    wait_photo_reported "$moment" 45
    shutterctl status > "$HIL_OUT/status-$moment.json" 2>&1
    sleep 2
    step 60 "tap ($moment): shutterd stop"
    shutterd_stop
done
led_sampler_stop
media > "$HIL_OUT/media.txt"
