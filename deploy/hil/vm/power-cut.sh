# power-cut: stage 1 takes a photo, then records with the tone playing until the host kills
# QEMU mid-clip (it watches the console for HIL-CUT and prints our clock until the end).
# Stage 2 boots on the same disk (ext4 replays its journal), takes another photo, and lists
# the files; the host checks the clip decodes and the counter did not reuse a number.
. /hil/lib.sh
led_sampler_start
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
if [ "$HIL_STAGE" = 1 ]; then
    # The disk loses the unsynced end of our logs in the cut: the console keeps the service's.
    tail -f "$HIL_OUT/shutterd.log" | while read -r l; do
        case "$l" in "["*) ;; *) console "SHUTTERD| $l" ;; esac
    done &
    tone_start
    sleep 1
    press; usleep 200000; release
    wait_media_count JPG 1 60
    sleep 3
    sync
    p=$(now_ms); press
    sleep 4
    console "HIL-CUT press_ms=$p now_ms=$(now_ms)"
    while :; do console "HIL-T $(now_ms)"; usleep 200000; done
else
    media > "$HIL_OUT/media-before.txt"
    sleep 2
    press; usleep 200000; release
    wait_media_count JPG 2 60
    sleep 2
    shutterd_stop
    led_sampler_stop
    media > "$HIL_OUT/media.txt"
fi
