# SPDX-License-Identifier: BSD-2-Clause
# power-cut: stage 1 takes a photo, then holds the button with the tone playing; once the clip
# is kept and the service has reported some of it durable, it tells the host (HIL-CUT), which
# kills QEMU a few seconds later, mid-clip (it watches the console, where this prints the
# service's log and our clock until the end). Stage 2 boots on the same disk (ext4 replays
# its journal), takes another photo, and lists the files; the host checks that everything
# reported durable before the cut is in the clip and the counter did not reuse a number.
. /hil/lib.sh

# clip_durable FROM K: the clip is kept (the hold gave it its DCF name) and, past the first
# FROM lines of the service's log, K of its fragments were reported durable; prints the file
# the recorder writes (maybe its temporary name: the content is the same after the rename).
clip_durable() {
    [ "$(media MP4 | wc -l)" -ge 1 ] || return 1
    awk -v from="$1" -v k="$2" 'NR > from && /durable: .* to [0-9.]* s \(fragment / { n++; path = $3 }
        END { if (n >= k) print path; else exit 1 }' "$HIL_OUT/shutterd.log"
}

led_sampler_start
step 240 "power-cut stage $HIL_STAGE: shutterd READY"
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
if [ "$HIL_STAGE" = 1 ]; then
    # The disk loses the unsynced end of our logs in the cut: the console keeps the service's.
    tail -f "$HIL_OUT/shutterd.log" | while read -r l; do
        case "$l" in "["*) ;; *) console "SHUTTERD| $l" ;; esac
    done &
    tone_start
    sleep 1
    step 90 "power-cut: tap -> JPEG"
    tap_exact
    wait_media_count JPG 1 60
    sleep 3
    sync
    from=$(wc -l < "$HIL_OUT/shutterd.log")
    step 240 "power-cut: hold until 2 fragments durable"
    p=$(now_ms); press
    # However slow the emulated encoder is (it runs far behind the camera under TCG), the
    # cut comes after two fragments of the kept clip were reported durable: the check is
    # against those reports, not against the clock.
    clip=""
    deadline=$((p + 180000))
    until clip=$(clip_durable "$from" 2); do
        [ "$(now_ms)" -ge "$deadline" ] && { echo "the clip had not 2 fragments durable 180 s after the press"; break; }
        usleep 500000
    done
    step 60 "power-cut: waiting for the cut"
    console "HIL-CUT press_ms=$p now_ms=$(now_ms) clip=$clip ."
    while :; do console "HIL-T $(now_ms)"; usleep 200000; done
else
    media > "$HIL_OUT/media-before.txt"
    sleep 2
    step 90 "power-cut stage 2: tap -> JPEG"
    tap_exact
    wait_media_count JPG 2 60
    sleep 2
    step 60 "power-cut stage 2: shutterd stop"
    shutterd_stop
    led_sampler_stop
    media > "$HIL_OUT/media.txt"
fi
