# SPDX-License-Identifier: BSD-2-Clause
# probe: proves the emulated devices without shutterd: the gpio-sim chip under its label and
# names, an input edge and an output value, the vimc camera through libcamera, and a tone
# looped through snd-aloop. The host checks the files left in $HIL_OUT.
. /hil/lib.sh
set -x
step 60 "probe: gpio-sim"
gpiodetect > "$HIL_OUT/gpiodetect.txt"
# The chip by its label. libgpiod 1.6's tools (the x86_64 roots take this machine's) name a
# chip by label too and take offsets after it; libgpiod 2's (the arm64 root's) take -c
# with the chip's name and hold gpioset's lines until killed.
chip=$(awk '/\[pinctrl-bcm2711\]/ {print $1; exit}' "$HIL_OUT/gpiodetect.txt")
gpiodetect --version > "$HIL_OUT/gpiod-version.txt" 2>&1
if grep -q 'v1\.' "$HIL_OUT/gpiod-version.txt"; then v2=""; else v2=1; fi
gpioinfo ${v2:+-c} "$chip" > "$HIL_OUT/gpioinfo.txt"
# An input edge: gpiomon sees the falling edge the sim pull makes.
if [ -n "$v2" ]; then
    gpiomon -c "$chip" -n 1 -e falling 17 > "$HIL_OUT/gpiomon.txt" &
else
    gpiomon --num-events=1 --falling-edge "$chip" 17 > "$HIL_OUT/gpiomon.txt" &
fi
mon=$!
sleep 1
press; sleep 0.2; release
wait_for 5 sh -c "! kill -0 $mon"
# An output: gpioset drives GPIO27 high; the sim's value file must read 1.
if [ -n "$v2" ]; then gpioset -c "$chip" 27=1 & else gpioset --mode=time --sec=2 "$chip" 27=1 & fi
setter=$!
sleep 1
cat "$HIL_GPIO/sim_gpio27/value" > "$HIL_OUT/gpio27-while-set.txt"
[ -n "$v2" ] && kill "$setter"
wait "$setter"
# What the board detection reads (BoardDetection: /proc/device-tree/model; none on x86_64),
# and the machine, for the VM's board file to say how it differs from a Pi.
uname -m > "$HIL_OUT/machine.txt"
tr -d '\0' < /proc/device-tree/model > "$HIL_OUT/dt-model.txt" 2>/dev/null
tr '\0' ' ' < /proc/device-tree/compatible > "$HIL_OUT/dt-compatible.txt" 2>/dev/null
step 240 "probe: libcamera (cam -l, 3 frames)"
cam -l > "$HIL_OUT/cam-list.txt" 2>&1
t0=$(now_ms)
cam -c 1 --capture=3 --file="$HIL_OUT/frame-#.bin" > "$HIL_OUT/cam-capture.txt" 2>&1
echo "capture_ms $(( $(now_ms) - t0 ))" >> "$HIL_OUT/timing.txt"
step 60 "probe: loopback tone"
aplay -l > "$HIL_OUT/aplay-l.txt" 2>&1
arecord -l > "$HIL_OUT/arecord-l.txt" 2>&1
tone_start
arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -d 2 "$HIL_OUT/loop.wav"
tone_stop
ls -la "$HIL_OUT"
