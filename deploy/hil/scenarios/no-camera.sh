# SPDX-License-Identifier: BSD-2-Clause
# no-camera: vimc unbound at start -> the service stays up, is not READY, the status LED
# repeats the no-camera code (2 blinks, pause); after the bind it gets READY and takes a photo.
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    [ -f "$d/rc" ] || { echo "the VM left no result (see serial-1.log)"; return 1; }
    [ -f "$d/alive-without-camera" ] || { echo "shutterd exited without a camera (see $d/shutterd.log)"; return 1; }
    b=$(button_ms "$d" bind)
    early=$(awk -v b="$b" '/READY=1/ && $1 < b {print $1; exit}' "$d/notify.log")
    [ -z "$early" ] || { echo "READY=1 sent without a camera"; return 1; }
    s=$(awk '$2 == "START" {print $1}' "$d/notify.log")
    groups=$(led_on_groups "$d/led.log" "$s" "$b")
    twos=$(echo "$groups" | tr ' ' '\n' | grep -c '^2$')
    [ "$twos" -ge 2 ] || { echo "status LED groups of blinks without camera: '$groups', expected the code 2 repeating"; return 1; }
    grep -q 'READY=1' "$d/notify.log" || { echo "not READY after vimc was bound again"; return 1; }
    [ "$(files JPG | wc -l)" -ge 1 ] || { echo "no JPEG after vimc was bound again"; return 1; }
    r=$(awk -v b="$b" '/READY=1/ && $1 >= b {print $1; exit}' "$d/notify.log")
    echo "LED blink groups without camera: $groups; READY $((r - b)) ms after the bind; $(files JPG | wc -l) JPEG"
}
