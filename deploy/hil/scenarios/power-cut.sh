# SPDX-License-Identifier: BSD-2-Clause
# power-cut: QEMU killed 3 s after the VM saw two fragments of a held clip reported durable
# (the service logs "durable: PATH to X s (fragment N, F frames)" after each fragment's
# fdatasync; the console keeps those lines). The next boot mounts the disk; the clip holds
# everything reported durable before the cut (F frames, X s); the earlier photo is intact
# and the counter moves on. The loss itself depends on the emulator's speed: a figure.
scenario_run() {
    hil_new_disk
    hil_boot 1 HIL-CUT 3 || return 1
    # What a repair would do to the disk as the cut left it (on a copy: the next boot must
    # find it as it was): replay the journal, fix free counts; rc 0-1 is a healthy ext4.
    cp --sparse=always "$OUT/disk.img" "$OUT/cut.img"
    e2fsck -fy "$OUT/cut.img" > "$OUT/fsck-after-cut.log" 2>&1; echo "e2fsck rc=$?" >> "$OUT/fsck-after-cut.log"
    rm -f "$OUT/cut.img"
    hil_boot 2 && hil_extract
}
# video_end FILE: where the video ends on the file's timeline (s): the stream's start plus
# its duration, the sum of the fragments' sample durations (ffprobe's per-packet durations
# are the codec's nominal 1/fps, not what the file says).
video_end() {
    ffprobe -v error -select_streams v:0 -show_entries stream=start_time,duration -of csv=p=0 "$1" |
        awk -F, '{ printf "%.3f", $1 + $2 }'
}
scenario_check() {
    d1=$(vm_file stage1); d2=$(vm_file stage2)
    vm_sane "$d2" || return 1
    cutfsck=$(sed -n 's/^e2fsck rc=//p' "$OUT/fsck-after-cut.log")
    [ "${cutfsck:-9}" -le 1 ] || { echo "e2fsck of the disk as cut: rc $cutfsck (see fsck-after-cut.log)"; return 1; }
    grep -q '^e2fsck rc=0' "$OUT/fsck.log" || { echo "e2fsck after the second boot is not clean (see fsck.log)"; return 1; }
    serial=$(tr -d '\r' < "$OUT/serial-1.log")
    cut=$(echo "$serial" | awk '/^HIL-T /{t=$2} END{print t}')
    press=$(echo "$serial" | sed -n 's/.*HIL-CUT press_ms=\([0-9]*\).*/\1/p')
    clip=$(echo "$serial" | sed -n 's/.*HIL-CUT .* clip=\([^ ]*\) \..*/\1/p')
    [ -n "$cut" ] && [ -n "$press" ] || { echo "stage 1 never reached the cut (see serial-1.log)"; return 1; }
    # The last durable report of the clip that reached the console before QEMU died.
    last=$(echo "$serial" | grep -F "SHUTTERD| " | grep -F "durable: $clip to " |
        grep -E ' to [0-9.]+ s \(fragment [0-9]+, [0-9]+ frames\)' | tail -1)
    [ -n "$clip" ] && [ -n "$last" ] || { echo "nothing of the clip was reported durable before the cut (see serial-1.log)"; return 1; }
    set -- $(echo "$last" | sed 's/.* to \([0-9.]*\) s (fragment \([0-9]*\), \([0-9]*\) frames).*/\1 \2 \3/')
    durable=$1; fragment=$2; dframes=$3
    m=$(files MP4)
    [ "$(echo "$m" | grep -c MP4)" = 1 ] || { echo "$(files MP4 | wc -l) clips after the cut, expected 1"; return 1; }
    decodes "$m" || { echo "the cut clip has decode errors: $(decode_errors "$m" | head -1)"; return 1; }
    set -- $(probe_video "$m"); frames=$2
    end=$(video_end "$m")
    figures=$(awk -v c="$cut" -v p="$press" -v x="$durable" -v y="$end" 'BEGIN {
        t = (c - p) / 1000; past = x - y; if (past < 0) past = 0
        printf "cut %.1f s after the press; reported durable before the cut %.3f s, decodes %.3f s, lost past durable %.3f s; total loss %.1f s", t, x, y, past, t - y }')
    echo "power-cut figures: $figures" >> "$OUT/host.log"
    [ "$frames" -ge "$dframes" ] && awk -v x="$durable" -v y="$end" 'BEGIN { exit !(y >= x - 0.001) }' \
        || { echo "$(basename "$m") lost what was reported durable: $figures ($frames frames decoded, $dframes reported in fragment $fragment)"; return 1; }
    j=$(files JPG)
    [ "$(echo "$j" | wc -l)" = 2 ] || { echo "$(echo "$j" | wc -l) JPEGs, expected the one before the cut and one after"; return 1; }
    for f in $j; do decodes "$f" || { echo "$(basename "$f") does not decode"; return 1; }; done
    num() { basename "$1" | sed 's/^SHTR0*\([0-9]*\)\..*/\1/'; }
    first=$(num "$(echo "$j" | head -1)"); clip=$(num "$m"); after=$(num "$(echo "$j" | tail -1)")
    [ "$after" -gt "$clip" ] && [ "$clip" -gt "$first" ] \
        || { echo "numbers photo $first, clip $clip, photo after reboot $after: not increasing"; return 1; }
    echo "$figures ($(basename "$m"): $frames frames decoded, $dframes reported durable in fragment $fragment); numbers $first, $clip, then $after after reboot; e2fsck -fy of the cut disk rc $cutfsck, after reboot clean"
}
