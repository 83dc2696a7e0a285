# SPDX-License-Identifier: BSD-2-Clause
# trigger: trigger inputs on gpio-sim lines besides the button. A PIR (GPIO23, photo, 30 s
# hold-off) pulsed 3 times -> exactly one JPEG; a door contact (GPIO24, clip while open + 3 s)
# held open 6 s -> one clip of about 9 s; a reed contact (GPIO25, active low, pull-up) closed
# with bounce -> one JPEG. The status counts each trigger's activations and captures, and
# each file's live event names the trigger that made it.
# Three captures and a clip's finish under TCG: more than the default 300 s stage bound when
# the host is loaded (the door's clip is finished long after it closes).
scenario_run() { HIL_BOOT_TIMEOUT=${HIL_BOOT_TIMEOUT:-900}; single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    s=$d/status.json
    [ "$(files JPG | wc -l)" = 2 ] || { echo "$(files JPG | wc -l) JPEGs, expected 2 (the PIR's, the reed's)"; return 1; }
    [ "$(files MP4 | wc -l)" = 1 ] || { echo "$(files MP4 | wc -l) clips, expected 1 (the door's)"; return 1; }
    for t in pir door reed; do
        grep -q "trigger $t: line GPIO" "$d/shutterd.log" || { echo "no start line for trigger $t (see shutterd.log)"; return 1; }
    done
    tget() { json_get "$s" ".status.triggers[] | select(.name == \"$1\") | .$2"; }
    [ "$(tget pir fired)" = 1 ] && [ "$(tget pir photos)" = 1 ] \
        || { echo "pir: fired $(tget pir fired), photos $(tget pir photos); expected 1 and 1 (see $s)"; return 1; }
    [ "$(tget pir ignored)" = 2 ] || { echo "pir: $(tget pir ignored) activations ignored, expected the 2 retriggers within the hold-off"; return 1; }
    [ "$(tget door clips)" = 1 ] || { echo "door: $(tget door clips) clips in status, expected 1"; return 1; }
    [ "$(tget reed fired)" = 1 ] && [ "$(tget reed ignored)" = 0 ] && [ "$(tget reed photos)" = 1 ] \
        || { echo "reed: fired $(tget reed fired), ignored $(tget reed ignored), photos $(tget reed photos); expected 1, 0, 1 (the bounces no activations)"; return 1; }
    m=$(files MP4)
    decodes "$m" || { echo "$(basename "$m") does not decode cleanly"; return 1; }
    set -- $(probe_video "$m"); dur=$3
    # Open 6 s + 3 s after; the emulator's edge and frame timing give a second either way.
    awk -v d="$dur" 'BEGIN{exit !(d >= 7 && d <= 12)}' || { echo "the door's clip lasts $dur s, expected about 9 (open 6 s + 3 s)"; return 1; }
    for t in pir door reed; do
        grep '"type" *: *"file"\|"file"' "$d/events.txt" | grep -q "\"trigger\" *: *\"$t\"" \
            || { echo "no file event naming trigger $t (see $d/events.txt)"; return 1; }
    done
    echo "pir: 3 pulses -> 1 JPEG (2 ignored within the hold-off); door open 6 s -> $(basename "$m") of $dur s; reed with bounce -> 1 JPEG; events name each trigger; $(ready_figures "$d")"
}
