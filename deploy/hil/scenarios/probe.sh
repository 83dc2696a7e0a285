# SPDX-License-Identifier: BSD-2-Clause
# probe: the emulated devices work without shutterd (gpio-sim, vimc via libcamera, aloop).
scenario_run() {
    hil_new_disk
    hil_boot 1 && hil_extract
}
scenario_check() {
    d=$(vm_file stage1)
    [ -f "$d/rc" ] || { echo "the VM left no result (see serial-1.log)"; return 1; }
    grep -q 'pinctrl-bcm2711.*(28 lines)' "$d/gpiodetect.txt" || { echo "no 28-line pinctrl-bcm2711 chip"; return 1; }
    grep -q '"GPIO17"' "$d/gpioinfo.txt" || { echo "GPIO17 not named"; return 1; }
    grep -qi 'FALLING' "$d/gpiomon.txt" || { echo "no falling edge seen on GPIO17"; return 1; }
    [ "$(cat "$d/gpio27-while-set.txt")" = 1 ] || { echo "GPIO27 output not seen by gpio-sim"; return 1; }
    grep -q 'vimc' "$d/cam-list.txt" || { echo "libcamera lists no vimc camera"; return 1; }
    n=$(ls "$d"/frame-*.bin 2>/dev/null | wc -l)
    [ "$n" -ge 3 ] || { echo "captured $n vimc frames, expected 3"; return 1; }
    grep -q 'Loopback' "$d/arecord-l.txt" || { echo "no Loopback capture card"; return 1; }
    rms=$(sox "$d/loop.wav" -n stat 2>&1 | awk '/RMS +amplitude/{print $3}')
    awk -v r="${rms:-0}" 'BEGIN{exit !(r > 0.1)}' || { echo "loopback recording is silent (RMS ${rms:-?})"; return 1; }
    echo "$(cat "$d/machine.txt" 2>/dev/null), $(head -1 "$d/gpiod-version.txt" 2>/dev/null): gpio-sim edges+outputs, $n vimc frames ($(cat "$d/timing.txt")), loopback tone RMS $rms; device tree model '$(cat "$d/dt-model.txt" 2>/dev/null)' compatible '$(cat "$d/dt-compatible.txt" 2>/dev/null)'"
}
