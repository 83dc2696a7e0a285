# power-cut: QEMU killed ~4 s into a clip; the next boot mounts the disk, the clip decodes up
# to within 2 s of the cut, the earlier photo is intact and the counter moves on.
scenario_run() {
    hil_new_disk
    hil_boot 1 HIL-CUT 4 || return 1
    # What a repair would do to the disk as the cut left it (on a copy: the next boot must
    # find it as it was): replay the journal, fix free counts; rc 0-1 is a healthy ext4.
    cp --sparse=always "$OUT/disk.img" "$OUT/cut.img"
    e2fsck -fy "$OUT/cut.img" > "$OUT/fsck-after-cut.log" 2>&1; echo "e2fsck rc=$?" >> "$OUT/fsck-after-cut.log"
    rm -f "$OUT/cut.img"
    hil_boot 2 && hil_extract
}
scenario_check() {
    d1=$(vm_file stage1); d2=$(vm_file stage2)
    vm_sane "$d2" || return 1
    cutfsck=$(sed -n 's/^e2fsck rc=//p' "$OUT/fsck-after-cut.log")
    [ "${cutfsck:-9}" -le 1 ] || { echo "e2fsck of the disk as cut: rc $cutfsck (see fsck-after-cut.log)"; return 1; }
    grep -q '^e2fsck rc=0' "$OUT/fsck.log" || { echo "e2fsck after the second boot is not clean (see fsck.log)"; return 1; }
    cut=$(awk '/HIL-T /{t=$2} END{print t}' "$OUT/serial-1.log")
    press=$(sed -n 's/.*HIL-CUT press_ms=\([0-9]*\).*/\1/p' "$OUT/serial-1.log")
    [ -n "$cut" ] && [ -n "$press" ] || { echo "stage 1 never reached the cut (see serial-1.log)"; return 1; }
    m=$(files MP4)
    [ "$(echo "$m" | grep -c MP4)" = 1 ] || { echo "$(files MP4 | wc -l) clips after the cut, expected 1"; return 1; }
    decodes "$m" || { echo "the cut clip has decode errors: $(decode_errors "$m" | head -1)"; return 1; }
    set -- $(probe_video "$m"); frames=$2; dur=$3
    want=$(awk -v c="$cut" -v p="$press" 'BEGIN{printf "%.1f", (c - p) / 1000}')
    awk -v d="$dur" -v w="$want" 'BEGIN{exit !(d >= w - 2)}' \
        || { echo "the cut clip holds $dur s; the cut came $want s after the press (allowed: 2 s lost)"; return 1; }
    j=$(files JPG)
    [ "$(echo "$j" | wc -l)" = 2 ] || { echo "$(echo "$j" | wc -l) JPEGs, expected the one before the cut and one after"; return 1; }
    for f in $j; do decodes "$f" || { echo "$(basename "$f") does not decode"; return 1; }; done
    num() { basename "$1" | sed 's/^SHTR0*\([0-9]*\)\..*/\1/'; }
    first=$(num "$(echo "$j" | head -1)"); clip=$(num "$m"); after=$(num "$(echo "$j" | tail -1)")
    [ "$after" -gt "$clip" ] && [ "$clip" -gt "$first" ] \
        || { echo "numbers photo $first, clip $clip, photo after reboot $after: not increasing"; return 1; }
    echo "cut $want s into the clip: $(basename "$m") decodes $dur s ($frames frames); numbers $first, $clip, then $after after reboot; e2fsck -fy of the cut disk rc $cutfsck, after reboot clean"
}
