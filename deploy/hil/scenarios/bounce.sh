# SPDX-License-Identifier: BSD-2-Clause
# bounce: a press with contact bounce (edges 1-3 ms apart, down and up) -> one gesture:
# exactly one JPEG per bouncing press, no clip. Attempts whose edges the stalled emulator
# spread past 18 ms are not bounces and do not count, JPEGs or clips (vm/bounce.sh retries
# them; one under load once had a 250 ms hold stretched to 866 ms and made a clip).
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    [ -f "$d/attempts.txt" ] || { echo "no bounce attempt was made (see vm.log)"; return 1; }
    tight=0
    # An attempt the emulator spread past 18 ms is no bounce (a 250 ms hold stretched
    # past a second is a hold): only the tight ones are judged, their clips included.
    while read -r i before after worst clips_before clips_after; do
        awk -v w="$worst" 'BEGIN{exit !(w < 18)}' || continue
        tight=$((tight + 1))
        [ "$clips_after" = "$clips_before" ] || { echo "attempt $i: a clip from a bouncing press (edge gaps $(edge_gaps "$d/edges-$i.txt")ms)"; return 1; }
        [ $((after - before)) = 1 ] || { echo "attempt $i: $((after - before)) JPEGs from one bouncing press (edge gaps $(edge_gaps "$d/edges-$i.txt")ms)"; return 1; }
        gaps=$(edge_gaps "$d/edges-$i.txt")
    done < "$d/attempts.txt"
    [ "$tight" -ge 1 ] || { echo "the emulator never produced edges under 18 ms apart ($(cat "$d/attempts.txt" | tr '\n' ';')): inconclusive"; return 1; }
    [ -f "$d/starved.txt" ] || { echo "the starved tap was not made (see vm.log)"; return 1; }
    read -r sb sa scb sca < "$d/starved.txt"
    held=$(awk 'NR == 1 {d = $1} NR == 2 {printf "%.0f", $1 - d}' "$d/edges-starved.txt")
    [ "$sca" = "$scb" ] || { echo "a ${held} ms tap on a starved CPU made a clip"; return 1; }
    [ $((sa - sb)) = 1 ] || { echo "a ${held} ms tap on a starved CPU made $((sa - sb)) JPEGs, not 1 (the press was lost before the service saw it)"; return 1; }
    echo "one JPEG, no clip from 10 edges with bounce gaps of ${gaps}ms ($(wc -l < "$d/attempts.txt") attempt(s)); a ${held} ms tap on a starved CPU: 1 JPEG; $(ready_figures "$d")"
}
# edge_gaps FILE: the gaps (ms) between hil-pull's edges, the 250 ms hold left out.
edge_gaps() { awk 'NR > 1 && NR != 6 {printf "%.1f ", $1 - prev} {prev = $1}' "$1"; }
