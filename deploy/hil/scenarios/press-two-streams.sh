# SPDX-License-Identifier: BSD-2-Clause
# roots: trixie
# press-two-streams: libcamera 0.7.1's virtual camera runs the press moment's two streams.
# Video asked 1280x720 on a camera that lists 1920x1080 and 4608x2592: granted 1920x1080 or
# 1280x720, never 4608x2592 (issue 22's first bug); the still stream is granted beside it
# (status camera.stillStream), at a size larger than video taken from what the StillCapture
# role lists (the pipeline has no Raw role: the second bug); no libcamera ERROR line in the
# log (the Raw role was asked before); the buffer memory is in status (two streams, count x
# bytes, the total) and the log. A press's JPEG has the still stream's size and is the frame
# of the press: |press to exposure| within the longest video frame interval around it.
scenario_run() { HIL_APPEND="hil.virtual=1" single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    b="$d/status-before.json"; a="$d/status-after.json"
    model=$(json_get "$b" .status.camera.model)
    [ "$model" = imx708-virtual ] || { echo "camera in use '$model', expected the virtual imx708-virtual (see $b)"; return 1; }
    video=$(json_get "$b" '.status.camera.videoSize | "\(.width)x\(.height)"')
    case $video in
        1920x1080|1280x720) ;;
        *) echo "video $video asked 1280x720: expected 1920x1080 or 1280x720, never the camera's largest (see $b)"; return 1 ;;
    esac
    [ "$(json_get "$b" .status.camera.stillStream.granted)" = true ] \
        || { echo "no still stream beside video: $(json_get "$b" .status.camera.stillStream.reason)"; return 1; }
    still=$(json_get "$b" '.status.camera.stillStream.size | "\(.width)x\(.height)"')
    [ "$still" = 4608x2592 ] || { echo "still stream $still, expected the camera's 4608x2592"; return 1; }
    errors=$(grep -E '\] +ERROR ' "$d/shutterd.log" | head -3)
    [ -z "$errors" ] || { echo "libcamera logged an ERROR: $errors"; return 1; }
    mem=$(json_get "$b" '.status.camera.bufferMemory')
    n=$(json_get "$b" '.status.camera.bufferMemory.streams | length')
    total=$(json_get "$b" '.status.camera.bufferMemory.totalBytes')
    sum=$(json_get "$b" '[.status.camera.bufferMemory.streams[] | .count * .bytesPerBuffer] | add')
    [ "$n" = 2 ] && [ "$total" = "$sum" ] || { echo "status camera.bufferMemory is not two streams adding up: $mem"; return 1; }
    stillbuf=$(json_get "$b" '.status.camera.bufferMemory.streams[] | select(.role == "still") | .bytesPerBuffer')
    [ "${stillbuf:-0}" -ge $((4608 * 2592 * 3 / 2)) ] || { echo "a still buffer of ${stillbuf:-?} bytes, smaller than 4608x2592 NV12"; return 1; }
    logmem=$(sed -n 's/.*camera buffers: //p' "$d/shutterd.log" | head -1)
    [ -n "$logmem" ] || { echo "no 'camera buffers:' line in the log"; return 1; }
    [ "$(files JPG | wc -l)" = 1 ] || { echo "$(files JPG | wc -l) JPEGs, expected 1"; return 1; }
    j=$(files JPG)
    decodes "$j" || { echo "$(basename "$j") does not decode"; return 1; }
    size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$j")
    [ "$size" = "$still" ] || { echo "JPEG $size, expected the still stream's $still"; return 1; }
    [ "$(json_get "$a" .status.lastPhoto.moment)" = press ] || { echo "the photo's moment is '$(json_get "$a" .status.lastPhoto.moment)'"; return 1; }
    p2e=$(json_get "$a" .status.lastPhoto.pressToExposureMs); gap=$(json_get "$a" .status.lastPhoto.videoGapMs)
    [ -n "$p2e" ] && [ -n "$gap" ] || { echo "no pressToExposureMs/videoGapMs in status (see $a)"; return 1; }
    awk -v e="$p2e" -v g="$gap" 'BEGIN{exit !(e <= g && e >= -g)}' \
        || { echo "press to exposure $p2e ms: more than one frame interval (${gap} ms) from the press"; return 1; }
    dropped0=$(json_get "$b" .status.counters.droppedFrames); dropped1=$(json_get "$a" .status.counters.droppedFrames)
    note=$(json_get "$b" .status.camera.videoSizeNote)
    echo "virtual imx708-virtual: video $video (asked 1280x720${note:+: $note}), still stream $still granted; press JPEG $size, press to exposure ${p2e} ms, longest video gap ${gap} ms, frames dropped ${dropped0:-?} -> ${dropped1:-?}; buffers $logmem ($total bytes); no libcamera ERROR; $(awk '{printf "%s %s ms", $1, $2}' "$d/timing.txt"); $(ready_figures "$d")"
}
