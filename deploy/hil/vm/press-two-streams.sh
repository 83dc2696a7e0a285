# SPDX-License-Identifier: BSD-2-Clause
# press-two-streams (libcamera 0.7.1): the press moment on the virtual camera Virtual0
# (1920x1080 at 30 fps and 4608x2592 at 10), video asked 1280x720: the service's status
# before the press (video size, still stream, buffer memory), one 200 ms press, the status
# after it (the photo's moment, size, press to exposure, longest video gap). No microphone:
# the virtual camera makes frames as fast as requests come back, which under emulation leaves
# little for the AAC encoder, and the press's frame must come within 2 s (PhotoPath.pinTimeout).
. /hil/lib.sh
cam -l > "$HIL_OUT/cam-list.txt" 2>&1
HIL_CONFIG='"camera": { "model": "imx708-virtual" }, "video": { "width": 1280, "height": 720, "fps": 10 }, "still": { "moment": "press" }, "audio": { "enabled": false }'
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 3
shutterctl status > "$HIL_OUT/status-before.json" 2>&1
t=$(now_ms); press; usleep 200000; release
wait_media_count JPG 1 60 && echo "edge_to_jpeg_ms $(( HIL_T - t ))" >> "$HIL_OUT/timing.txt"
# The gap covers the frames after the photo (2 s of them, then until the report is there).
sleep 2
wait_photo_reported press 45
shutterctl status > "$HIL_OUT/status-after.json" 2>&1
shutterd_stop
media > "$HIL_OUT/media.txt"
