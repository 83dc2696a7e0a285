# tap: 200 ms press -> one decodable JPEG from vimc with model and exposure in EXIF, and the
# status LED showed the photo blip (dark ~100 ms against steady "ready").
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    n=$(files JPG | wc -l)
    [ "$n" = 1 ] || { echo "$n JPEGs, expected 1"; return 1; }
    j=$(files JPG)
    decodes "$j" || { echo "$(basename "$j") does not decode"; return 1; }
    size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$j")
    model=$(exiftool -s3 -Model "$j"); exposure=$(exiftool -s3 -ExposureTime "$j")
    taken=$(exiftool -s3 -SubSecDateTimeOriginal "$j")
    [ -n "$model" ] || { echo "no EXIF Model"; return 1; }
    [ -n "$taken" ] || { echo "no EXIF DateTimeOriginal with SubSec"; return 1; }
    # libcamera's vimc pipeline (0.0.3) reports no ExposureTime in its metadata, so the
    # service has none to write; with a sensor that reports it, it must be there.
    if grep -q 'ExposureTime' "$d/cam-metadata.txt" 2>/dev/null; then
        [ -n "$exposure" ] || { echo "the camera reports ExposureTime but the EXIF has none"; return 1; }
    fi
    p=$(button_ms "$d" press)
    [ "$(led_at "$d/led.log" $((p - 20)) 2)" = 1 ] || { echo "status LED not steady on (ready) before the press"; return 1; }
    blips=$(led_dark_blips "$d/led.log" "$p" $((p + 10000)))
    [ -n "$blips" ] || { echo "no photo blip on the status LED after the press"; return 1; }
    [ "$(files MP4 | wc -l)" = 0 ] || { echo "a tap also made a clip"; return 1; }
    echo "$(basename "$j") ${size}, EXIF Model '$model' taken $taken ExposureTime ${exposure:-none (vimc reports none)}, LED dark blips(start:ms) $blips; edge->JPEG $(awk '{print $2}' "$d/timing.txt") ms; $(ready_figures "$d")"
}
