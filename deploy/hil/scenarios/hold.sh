# SPDX-License-Identifier: BSD-2-Clause
# hold: ~3 s hold with the loopback tone playing -> one MP4, H.264 + AAC, the tone audible
# in it (~440 Hz), the frame count the service logged (vimc sets the rate: 0.5..30 fps),
# and the status LED blinking while recording.
scenario_run() { single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    n=$(files MP4 | wc -l)
    [ "$n" = 1 ] || { echo "$n clips, expected 1"; return 1; }
    m=$(files MP4)
    decodes "$m" || { echo "$(basename "$m") does not decode cleanly"; return 1; }
    set -- $(probe_video "$m"); vcodec=$1; frames=$2; dur=$3
    [ "$vcodec" = h264 ] || { echo "video codec '$vcodec', expected h264"; return 1; }
    acodec=$(probe_audio_codec "$m")
    [ "$acodec" = aac ] || { echo "audio codec '$acodec', expected aac"; return 1; }
    awk -v d="$dur" 'BEGIN{exit !(d >= 2.0 && d <= 5.5)}' || { echo "clip lasts $dur s for a 3 s hold"; return 1; }
    # vimc has no frame-duration control, so its rate under emulation (not the board's 10 fps)
    # sets the count: the file must hold the frames the service says it wrote, at 0.5..30 fps
    # (libcamera 0.7.1's vimc debayers a 1920x1080 sensor frame whatever the size asked:
    # about 1 fps under TCG on a loaded machine, where 0.0.3 scaled a third of it up).
    said=$(sed -n 's/.*clip saved: .*SHTR[0-9]*\.MP4 (\([0-9]*\) frames.*/\1/p' "$d/shutterd.log" | head -1)
    [ -n "$said" ] && [ "$frames" -ge $((said - 1)) ] && [ "$frames" -le $((said + 1)) ] \
        || { echo "$frames frames decoded, the service logged ${said:-no} frames for the clip"; return 1; }
    awk -v f="$frames" -v d="$dur" 'BEGIN{exit !(f >= d * 0.5 && f <= d * 30)}' \
        || { echo "$frames frames in $dur s: not 0.5..30 fps"; return 1; }
    set -- $(audio_stat "$m"); rms=${1:-0}; freq=${2:-0}
    case "$rms" in *nan*) echo "the clip's AAC track holds no samples"; return 1 ;; esac
    awk -v r="$rms" -v f="$freq" 'BEGIN{exit !(r > 0.05 && f > 400 && f < 480)}' \
        || { echo "audio RMS $rms, ~$freq Hz: not the 440 Hz loopback tone"; return 1; }
    p=$(button_ms "$d" press); r=$(button_ms "$d" release)
    e=$(led_edges "$d/led.log" $((p + 1000)) "$r" 2)
    [ "$e" -ge 2 ] || { echo "status LED changed $e times while recording: no blink"; return 1; }
    echo "$(basename "$m") h264+aac, $frames frames in $dur s ($(awk -v f="$frames" -v d="$dur" 'BEGIN{printf "%.1f", f/d}') fps), tone RMS $rms ~$freq Hz, LED $e edges while recording; $(ready_figures "$d")"
}
