# SPDX-License-Identifier: BSD-2-Clause
# roots: trixie
# switch: `shutterctl camera` between real libcamera cameras (libcamera 0.7.1): vimc ->
# Virtual0 -> Virtual1 -> vimc, each reply ok naming the camera and status showing it, a
# photo on Virtual0 (its still stream's size); then a switch to a camera that cannot start
# (Virtual2: 7680x4320 buffers of 49.8 MB against udmabuf.size_limit_mb=32, the DMA heap
# hidden so libcamera allocates from udmabuf) answers ok:false saying why and that vimc runs
# again, which a photo after it proves. Prints each switch's time (command to reply).
scenario_run() {
    HIL_APPEND="hil.virtual=1 hil.bigcamera=1 hil.noheap=1 udmabuf.size_limit_mb=32" single_boot
}
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    n=$(json_get "$d/cameras.json" '.cameras | length')
    [ "$n" = 4 ] || { echo "$n cameras listed, expected vimc and three virtual ones (see cameras.json)"; return 1; }
    # expect LABEL MODEL: the switch's reply was ok and status shows MODEL in use.
    expect() {
        [ "$(json_get "$d/switch-$1.json" .ok)" = true ] || { echo "switch $1: $(cat "$d/switch-$1.json")"; return 1; }
        m=$(json_get "$d/status-$1.json" .status.camera.model)
        [ "$m" = "$2" ] || { echo "after switch $1 status shows '$m', expected $2"; return 1; }
    }
    expect virtual0 imx708-virtual || return 1
    expect virtual1 ov5647-virtual || return 1
    expect back "Sensor B" || return 1
    [ "$(json_get "$d/tap-virtual0.json" .ok)" = true ] || { echo "photo on Virtual0: $(cat "$d/tap-virtual0.json")"; return 1; }
    j=$(files JPG | head -1)
    size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$j")
    still=$(json_get "$d/status-virtual0.json" '.status.camera.stillStream.size | "\(.width)x\(.height)"')
    [ -n "$still" ] && [ "$size" = "$still" ] || { echo "photo on Virtual0 $size, expected its still stream ${still:-(none granted)}"; return 1; }
    f="$d/switch-fails.json"
    [ "$(json_get "$f" .ok)" = false ] || { echo "the switch to Virtual2 was not refused: $(cat "$f")"; return 1; }
    why=$(jq -r '.. | strings' "$f" 2>/dev/null | grep 'did not start' | head -1)
    echo "$why" | grep -q "could not be allocated" || { echo "the failed switch does not say its buffers could not be allocated: $why"; return 1; }
    echo "$why" | grep -q 'went back to camera 0' || { echo "the failed switch's reply does not say it went back to camera 0: $(cat "$f")"; return 1; }
    m=$(json_get "$d/status-end.json" .status.camera.model)
    [ "$m" = "Sensor B" ] || { echo "after the failed switch status shows '$m', expected vimc's Sensor B"; return 1; }
    [ "$(json_get "$d/tap-after-fail.json" .ok)" = true ] || { echo "no photo after the failed switch: $(cat "$d/tap-after-fail.json")"; return 1; }
    [ "$(files JPG | wc -l)" = 2 ] || { echo "$(files JPG | wc -l) JPEGs, expected 2"; return 1; }
    echo "vimc -> Virtual0 -> Virtual1 -> vimc ok; photo on Virtual0 $size; switch ms: $(tr '\n' ' ' < "$d/switch-ms.txt")| failed switch: $why; $(ready_figures "$d")"
}
