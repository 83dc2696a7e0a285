# SPDX-License-Identifier: BSD-2-Clause
# power-cut-finish: QEMU killed inside a clip's finish (the fragmented file complete and
# synced, the regular copy being written beside it, held before its rename by shutterd's
# --debug-stall-finish). The next boot removes the copy and finishes the clip again: one clip, a regular MP4
# (no moof/mfra at the top level), every frame reported durable in it, no hidden file left.
scenario_run() {
    hil_new_disk
    hil_boot 1 HIL-CUT 1 || return 1
    hil_boot 2 && hil_extract
}
# top_boxes FILE: the types of the file's top-level boxes, space-separated.
top_boxes() {
    python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read(); o = 0; out = []
while o + 8 <= len(d):
    n, t = struct.unpack(">I4s", d[o:o + 8])
    if n == 1: n = struct.unpack(">Q", d[o + 8:o + 16])[0]
    if n == 0: n = len(d) - o
    if n < 8: break
    out.append(t.decode("latin-1")); o += n
print(" ".join(out))
PY
}
scenario_check() {
    d2=$(vm_file stage2)
    vm_sane "$d2" || return 1
    serial=$(tr -d '\r' < "$OUT/serial-1.log")
    echo "$serial" | grep -q "HIL-CUT finishing=/" || { echo "stage 1 never reached a finish under way (see serial-1.log)"; return 1; }
    # The clip's last durable report before the cut: its whole fragmented file.
    last=$(echo "$serial" | grep -F "SHUTTERD| " | grep -E 'durable: .* complete, [0-9.]+ s \([0-9]+ fragments, [0-9]+ frames\)' | tail -1)
    [ -n "$last" ] || { echo "the clip was never reported complete before the cut (see serial-1.log)"; return 1; }
    dframes=$(echo "$last" | sed 's/.* fragments, \([0-9]*\) frames).*/\1/')
    m=$(files MP4)
    [ "$(echo "$m" | grep -c MP4)" = 1 ] || { echo "$(files MP4 | wc -l) clips after the cut, expected 1"; return 1; }
    boxes=$(top_boxes "$m")
    case " $boxes " in *" moof "*|*" mfra "*) echo "$(basename "$m") is still fragmented after the restart: $boxes"; return 1 ;; esac
    grep -q '\.finishing' "$d2/dcim-all.txt" && { echo "a hidden .finishing file is left: $(grep finishing "$d2/dcim-all.txt")"; return 1; }
    decodes "$m" || { echo "the clip has decode errors: $(decode_errors "$m" | head -1)"; return 1; }
    set -- $(probe_video "$m"); frames=$2
    [ "$frames" -ge "$dframes" ] || { echo "$(basename "$m") lost what was reported durable: $frames frames, $dframes reported"; return 1; }
    echo "cut inside the finish; after the restart $(basename "$m") is a regular MP4 ($boxes), $frames frames decoded, $dframes reported durable, no hidden file left"
}
