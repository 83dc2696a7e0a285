# SPDX-License-Identifier: BSD-2-Clause
# tap: one boot, the service started with `still.moment` press (the default), then focused;
# a 200 ms press each. press: vimc's pipeline grants one stream (status camera.stillStream
# not granted), so the photo is the video frame at the press: a JPEG of the video size whose
# exposure start is within one frame period of the press (the longest frame interval the
# service saw around it, `videoGapMs`: vimc sets its own rate). focused: a mode switch to the
# still size after the press, so the JPEG is the still size and its exposure starts after the
# press. Both decode, with EXIF model and time; the status LED blips for the press photo.
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    [ "$(grep -c 'READY=1' "$d/notify.log")" -ge 2 ] || { echo "the service started for focused never got READY (see $d/shutterd.log)"; return 1; }
    n=$(files JPG | wc -l)
    [ "$n" = 2 ] || { echo "$n JPEGs, expected 2 (press, focused)"; return 1; }
    [ "$(files MP4 | wc -l)" = 0 ] || { echo "a tap also made a clip"; return 1; }
    # libcamera's vimc pipeline (0.0.3) reports no ExposureTime in its metadata, so the
    # service has none to write; with a sensor that reports it, it must be there.
    reports_exposure=$(grep -c 'ExposureTime' "$d/cam-metadata.txt" 2>/dev/null)
    out=""
    i=0
    for moment in press focused; do
        i=$((i + 1))
        j=$(files JPG | sed -n "${i}p"); s="$d/status-$moment.json"
        decodes "$j" || { echo "$moment: $(basename "$j") does not decode"; return 1; }
        size=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$j")
        model=$(exiftool -s3 -Model "$j"); exposure=$(exiftool -s3 -ExposureTime "$j")
        taken=$(exiftool -s3 -SubSecDateTimeOriginal "$j")
        [ -n "$model" ] || { echo "$moment: no EXIF Model"; return 1; }
        [ -n "$taken" ] || { echo "$moment: no EXIF DateTimeOriginal with SubSec"; return 1; }
        if [ "${reports_exposure:-0}" -gt 0 ]; then
            [ -n "$exposure" ] || { echo "the camera reports ExposureTime but the EXIF has none"; return 1; }
        fi
        got=$(json_get "$s" .status.lastPhoto.moment)
        [ "$got" = "$moment" ] || { echo "$moment: status says the photo was taken '${got:-?}' (see $s)"; return 1; }
        p2e=$(json_get "$s" .status.lastPhoto.pressToExposureMs); r2d=$(json_get "$s" .status.lastPhoto.releaseToDurableMs)
        gap=$(json_get "$s" .status.lastPhoto.videoGapMs)
        [ -n "$p2e" ] && [ -n "$gap" ] || { echo "$moment: no pressToExposureMs/videoGapMs in status (see $s)"; return 1; }
        grep -q "photo saved: .*$(basename "$j") (${size}, moment $moment, press to exposure" "$d/shutterd.log" \
            || { echo "$moment: no 'photo saved' log line with its size, moment and press to exposure"; return 1; }
        video=$(json_get "$s" '.status.camera.videoSize | "\(.width)x\(.height)"')
        case $moment in
        press)
            [ "$(json_get "$s" .status.camera.stillStream.granted)" = false ] \
                || { echo "press: status camera.stillStream is '$(json_get "$s" .status.camera.stillStream)', expected not granted on vimc"; return 1; }
            reason=$(json_get "$s" .status.camera.stillStream.reason)
            [ "$size" = "$video" ] || { echo "press: JPEG $size, expected the video frame's $video"; return 1; }
            awk -v e="$p2e" -v g="$gap" 'BEGIN{exit !(e <= g && e >= -g)}' \
                || { echo "press: press to exposure $p2e ms, more than one frame period (${gap} ms) from the press"; return 1; }
            p=$(button_ms "$d" press)
            [ "$(led_at "$d/led.log" $((p - 20)) 2)" = 1 ] || { echo "status LED not steady on (ready) before the press"; return 1; }
            # Up to a second past the JPEG: later the service stops and starts again for focused.
            t=$(awk '$1 == "press" {print $3}' "$d/timing.txt")
            blips=$(led_dark_blips "$d/led.log" "$p" $((p + ${t:-9000} + 1000)))
            [ -n "$blips" ] || { echo "no photo blip on the status LED after the press"; return 1; }
            out="press: $(basename "$j") ${size} = video (still stream: $reason), press to exposure ${p2e} ms (frame period <= ${gap} ms), release to durable ${r2d} ms, LED blips $blips"
            ;;
        focused)
            still=$(json_get "$s" '.status.camera.stillSize | "\(.width)x\(.height)"')
            [ -z "$(json_get "$s" .status.camera.stillStream)" ] || { echo "focused: a still stream was asked beside video"; return 1; }
            [ "$size" = "$still" ] && [ "$size" != "$video" ] || { echo "focused: JPEG $size, expected the still size ${still:-?} (video $video)"; return 1; }
            awk -v e="$p2e" 'BEGIN{exit !(e > 0)}' || { echo "focused: press to exposure $p2e ms, expected after the press (the mode switch)"; return 1; }
            out="$out; focused: $(basename "$j") ${size}, press to exposure ${p2e} ms, release to durable ${r2d} ms, video gap ${gap} ms"
            ;;
        esac
    done
    echo "$out; EXIF Model '$model' ExposureTime ${exposure:-none (vimc reports none)}; edge->JPEG $(awk '{printf "%s %s ms ", $1, $3}' "$d/timing.txt"); $(ready_figures "$d")"
}
