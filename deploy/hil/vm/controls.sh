# SPDX-License-Identifier: BSD-2-Clause
# controls: the image controls vimc's sensor honours (its test pattern generator's
# brightness, contrast, saturation) set through the config file and `shutterctl set`/`reset`,
# one photo after each change. photos.txt maps each photo to its label, in order; the host
# measures the JPEGs. One boot.
. /hil/lib.sh
# What libcamera's vimc pipeline exposes, and what a frame's metadata carries.
cam -c 1 --list-controls > "$HIL_OUT/cam-controls.txt" 2>&1
cam -c 1 --capture=2 --metadata > "$HIL_OUT/cam-metadata.txt" 2>&1
HIL_CONFIG='"camera": { "image": { "brightness": 0.4 } }'
shutterd_start
wait_ready 180 || echo "not READY after 180 s"
sleep 2
n=0
# photo LABEL: one 200 ms press, waits for the next JPEG and records which it is.
photo() {
    n=$((n + 1))
    press; usleep 200000; release
    if wait_media_count JPG "$n" 60; then
        echo "$1 $(basename "$(media JPG | tail -1)")" >> "$HIL_OUT/photos.txt"
    else
        echo "$1 none" >> "$HIL_OUT/photos.txt"; n=$((n - 1))
    fi
    sleep 1
}
# ctl ARGS...: shutterctl, its reply logged (and an error's too).
ctl() { echo "\$ shutterctl $*" >> "$HIL_OUT/shutterctl.log"; shutterctl "$@" >> "$HIL_OUT/shutterctl.log" 2>&1; }

photo config_bright                               # brightness 0.4 from the config file
ctl get camera.image.brightness
ctl status
ctl set camera.image.brightness 0;     photo base  # the neutral baseline
ctl set camera.image.brightness -0.4;  photo dark
ctl reset camera.image.brightness;     photo reset_bright  # back to the config's 0.4
ctl set camera.image.brightness 0
ctl set camera.image.saturation 0;     photo grey
ctl set camera.image.saturation 2;     photo vivid
ctl set camera.image.saturation 1
ctl set camera.image.contrast 2;       photo contrast_high
ctl set camera.image.contrast 0.5;     photo contrast_low
ctl get
shutterd_stop
media > "$HIL_OUT/media.txt"
