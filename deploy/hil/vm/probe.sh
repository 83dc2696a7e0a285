# probe: proves the emulated devices without shutterd: the gpio-sim chip under its label and
# names, an input edge and an output value, the vimc camera through libcamera, and a tone
# looped through snd-aloop. The host checks the files left in $HIL_OUT.
. /hil/lib.sh
set -x
gpiodetect > "$HIL_OUT/gpiodetect.txt"
gpioinfo pinctrl-bcm2711 > "$HIL_OUT/gpioinfo.txt"
# An input edge: gpiomon sees the falling edge the sim pull makes.
gpiomon --num-events=1 --falling-edge pinctrl-bcm2711 17 > "$HIL_OUT/gpiomon.txt" &
mon=$!
sleep 1
press; sleep 0.2; release
wait_for 5 sh -c "! kill -0 $mon"
# An output: gpioset drives GPIO27 high; the sim's value file must read 1.
gpioset --mode=time --sec=2 pinctrl-bcm2711 27=1 &
sleep 1
cat "$HIL_GPIO/sim_gpio27/value" > "$HIL_OUT/gpio27-while-set.txt"
wait
cam -l > "$HIL_OUT/cam-list.txt" 2>&1
t0=$(now_ms)
cam -c 1 --capture=3 --file="$HIL_OUT/frame-#.bin" > "$HIL_OUT/cam-capture.txt" 2>&1
echo "capture_ms $(( $(now_ms) - t0 ))" >> "$HIL_OUT/timing.txt"
aplay -l > "$HIL_OUT/aplay-l.txt" 2>&1
arecord -l > "$HIL_OUT/arecord-l.txt" 2>&1
tone_start
arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -d 2 "$HIL_OUT/loop.wav"
tone_stop
ls -la "$HIL_OUT"
