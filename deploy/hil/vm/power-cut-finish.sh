# SPDX-License-Identifier: BSD-2-Clause
# power-cut-finish: stage 1 holds the button until two fragments of the clip are reported
# durable, releases it, and waits until the clip is saved (its fragmented file complete and
# synced: "durable: PATH complete, ...") and its finish has begun (the hidden
# .SHTRnnnn.MP4.finishing file beside it). The finish is held before its rename by the debug
# option --debug-stall-finish (which logs once it holds there), so the cut lands inside it;
# the host kills QEMU then.
# Stage 2 boots on the same disk: the service removes the hidden file, finishes the clip
# again, and lists what is on the card.
. /hil/lib.sh

step 240 "power-cut-finish stage $HIL_STAGE: shutterd READY"
if [ "$HIL_STAGE" = 1 ]; then
    shutterd_start --debug-stall-finish before-rename
    wait_ready 180 || echo "not READY after 180 s"
    tail -f "$HIL_OUT/shutterd.log" | while read -r l; do
        case "$l" in "["*) ;; *) console "SHUTTERD| $l" ;; esac
    done &
    tone_start
    sleep 1
    step 240 "power-cut-finish: hold until 2 fragments durable"
    from=$(wc -l < "$HIL_OUT/shutterd.log")
    press
    deadline=$(( $(now_ms) + 180000 ))
    until awk -v from="$from" 'NR > from && /durable: .* to [0-9.]* s \(fragment 2,/ { f = 1 } END { exit !f }' "$HIL_OUT/shutterd.log"; do
        [ "$(now_ms)" -ge "$deadline" ] && { echo "no 2 fragments durable 180 s after the press"; break; }
        usleep 200000
    done
    release
    step 240 "power-cut-finish: the clip saved, its finish under way"
    until grep -q 'clip saved: ' "$HIL_OUT/shutterd.log" && grep -q "finish stopped before-rename" "$HIL_OUT/shutterd.log"; do
        [ "$(now_ms)" -ge "$((deadline + 180000))" ] && { echo "no finish under way"; break; }
        usleep 200000
    done
    step 60 "power-cut-finish: waiting for the cut"
    console "HIL-CUT finishing=$(ls /mnt/data/DCIM/*/.SHTR*.MP4.finishing 2>/dev/null | head -1) ."
    while :; do console "HIL-T $(now_ms)"; usleep 200000; done
else
    shutterd_start
    wait_ready 180 || echo "not READY after 180 s"
    sleep 2
    step 60 "power-cut-finish stage 2: shutterd stop"
    shutterd_stop
    media > "$HIL_OUT/media.txt"
    ls -a /mnt/data/DCIM/* > "$HIL_OUT/dcim-all.txt" 2>&1
fi
