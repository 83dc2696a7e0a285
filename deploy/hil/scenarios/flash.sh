# SPDX-License-Identifier: BSD-2-Clause
# flash: flash.mode "on" -> the flash LED line was high between the press and the JPEG.
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    [ "$(files JPG | wc -l)" = 1 ] || { echo "$(files JPG | wc -l) JPEGs, expected 1"; return 1; }
    p=$(button_ms "$d" press); t=$(button_ms "$d" jpeg)
    [ "$(led_at "$d/led.log" $((p - 20)) 3)" = 0 ] || { echo "flash LED already on before the press"; return 1; }
    on=$(awk -v a="$p" -v b="$((t + 500))" '$1 >= a && $1 <= b && $3 == 1 {print $1; exit}' "$d/led.log")
    [ -n "$on" ] || { echo "flash LED never high between the press and the JPEG (+0.5 s)"; return 1; }
    off=$(awk -v a="$on" '$1 > a && $3 == 0 {print $1; exit}' "$d/led.log")
    [ -n "$off" ] || { echo "flash LED stayed on after the still"; return 1; }
    echo "flash high from press+$((on - p)) ms for $((off - on)) ms; JPEG at press+$((t - p)) ms"
}
