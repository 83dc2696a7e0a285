# SPDX-License-Identifier: BSD-2-Clause
# controls-07 (libcamera 0.7.1): the camera section on vimc and on a virtual camera: from the
# config (EV, white balance mode, brightness) and `shutterctl set` (a fixed shutter and gain,
# which libcamera 0.5+ names ExposureTimeMode/AnalogueGainMode), status after each camera's
# start; what libcamera's cameras list (`cam --list-controls`).
. /hil/lib.sh
cam -c 1 --list-controls > "$HIL_OUT/cam-controls-vimc.txt" 2>&1
cam -c 2 --list-controls > "$HIL_OUT/cam-controls-virtual.txt" 2>&1
HIL_CONFIG='"camera": { "exposure": { "ev": 1 }, "whiteBalance": { "mode": "daylight" }, "image": { "brightness": 0.3 } }, "video": { "width": 1280, "height": 720, "fps": 10 }'
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
ctl() { echo "\$ shutterctl $*" >> "$HIL_OUT/shutterctl.log"; shutterctl "$@" >> "$HIL_OUT/shutterctl.log" 2>&1; echo >> "$HIL_OUT/shutterctl.log"; }
ctl set camera.exposure.shutterUs 10000
ctl set camera.exposure.gain 2
sleep 1
shutterctl status > "$HIL_OUT/status-vimc.json" 2>&1
ctl camera 1
sleep 2
shutterctl status > "$HIL_OUT/status-virtual.json" 2>&1
ctl tap
sleep 1
shutterd_stop
