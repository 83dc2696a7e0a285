# bounce: a press with contact bounce (edges 1-3 ms apart, down and up) -> one gesture:
# exactly one JPEG, no clip.
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    j=$(files JPG | wc -l); m=$(files MP4 | wc -l)
    [ "$j" = 1 ] && [ "$m" = 0 ] || { echo "$j JPEGs and $m clips from one bouncing press, expected 1 and 0"; return 1; }
    # The bounce must really have been faster than the service's 20 ms stability window.
    gaps=$(awk 'NR > 1 {g = $1 - prev; if (g < 100) printf "%.1f ", g} {prev = $1}' "$d/edges.txt")
    worst=$(echo "$gaps" | tr ' ' '\n' | sort -n | tail -1)
    awk -v w="${worst:-99}" 'BEGIN{exit !(w < 15)}' || { echo "bounce edges were $gaps ms apart: too slow to be a bounce"; return 1; }
    echo "one JPEG, no clip from 10 edges with bounce gaps of $gaps ms; $(ready_figures "$d")"
}
