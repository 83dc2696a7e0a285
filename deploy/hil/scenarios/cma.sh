# SPDX-License-Identifier: BSD-2-Clause
# roots: trixie
# cma: a camera whose two-stream buffers do not fit (a Pi's CMA area is small: docs/control-and-api.md "Buffer
# memory"). The VM hides the DMA heap, so libcamera's virtual pipeline allocates from udmabuf,
# limited to 16 MB a buffer: 1920x1080 NV12 video buffers (3.1 MB) fit, 4608x2592 still
# buffers (17.9 MB) do not. The service must start with video alone and say why (status
# camera.stillStream not granted, with the allocation's reason; the log), report one
# stream's buffer memory, and a press still gives a photo (the video frame).
scenario_run() { HIL_APPEND="hil.virtual=1 hil.noheap=1 udmabuf.size_limit_mb=16" single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    grep -q system "$d/devices.txt" && { echo "the DMA heap is still there (see devices.txt)"; return 1; }
    b="$d/status-before.json"
    [ "$(json_get "$b" .status.camera.model)" = imx708-virtual ] || { echo "not on Virtual0 (see $b)"; return 1; }
    [ "$(json_get "$b" .status.camera.stillStream.granted)" = false ] \
        || { echo "a still stream was granted under the 16 MB limit: $(json_get "$b" .status.camera.stillStream)"; return 1; }
    reason=$(json_get "$b" .status.camera.stillStream.reason)
    echo "$reason" | grep -q "could not be allocated.*video alone" || { echo "the reason does not say the buffers could not be allocated, video alone: '$reason'"; return 1; }
    grep -q "no still stream beside video (.*video alone" "$d/shutterd.log" || { echo "the log does not say it (see shutterd.log)"; return 1; }
    n=$(json_get "$b" '.status.camera.bufferMemory.streams | length')
    role=$(json_get "$b" '.status.camera.bufferMemory.streams[0].role')
    [ "$n" = 1 ] && [ "$role" = video ] || { echo "buffer memory is not video alone: $(json_get "$b" .status.camera.bufferMemory)"; return 1; }
    video=$(json_get "$b" '.status.camera.videoSize | "\(.width)x\(.height)"')
    [ "$(files JPG | wc -l)" = 1 ] || { echo "$(files JPG | wc -l) JPEGs after the press, expected 1"; return 1; }
    size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$(files JPG)")
    [ "$size" = "$video" ] || { echo "press JPEG $size, expected the video frame's $video"; return 1; }
    echo "udmabuf 16 MB a buffer: video alone ($reason); buffers $(sed -n 's/.*camera buffers: //p' "$d/shutterd.log" | head -1); press JPEG $size"
}
