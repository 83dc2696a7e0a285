# bounce: a press with contact bounce (edges 1-3 ms apart, down and up) -> one gesture:
# exactly one JPEG, no clip.
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    j=$(files JPG | wc -l); m=$(files MP4 | wc -l)
    [ "$j" = 1 ] && [ "$m" = 0 ] || { echo "$j JPEGs and $m clips from one bouncing press, expected 1 and 0"; return 1; }
    echo "one JPEG from 5 down-edges and 5 up-edges 1-3 ms apart; $(ready_figures "$d")"
}
