# SPDX-License-Identifier: BSD-2-Clause
# controls: vimc's sensor (its test pattern generator) honours Brightness, Contrast and
# Saturation through libcamera's vimc pipeline. The VM sets them from the config file and with
# `shutterctl set`/`reset`, one photo after each change; here each JPEG's mean luma (YAVG),
# mean saturation (SATAVG: chroma distance from neutral) and luma spread (YHIGH - YLOW, the
# 90th - 10th percentile) from ffmpeg's signalstats must move the right way against the
# baseline photo (every control neutral) of the same run.
scenario_run() { single_boot; }

# stats LABEL: "YAVG SATAVG SPREAD" of the photo the VM recorded under LABEL.
stats() {
    f=$(awk -v l="$1" '$1 == l {print $2}' "$(vm_file stage1)/photos.txt")
    j=$(ls "$OUT"/disk/DCIM/*/"$f" 2>/dev/null)
    [ -n "$f" ] && [ "$f" != none ] && [ -n "$j" ] || return 1
    ffprobe -v error -f lavfi -i "movie=$j,signalstats" -show_entries \
        frame_tags=lavfi.signalstats.YAVG,lavfi.signalstats.SATAVG,lavfi.signalstats.YLOW,lavfi.signalstats.YHIGH \
        -of default=nw=1 | awk -F= '{v[$1] = $2} END {printf "%.1f %.1f %d", v["TAG:lavfi.signalstats.YAVG"],
            v["TAG:lavfi.signalstats.SATAVG"], v["TAG:lavfi.signalstats.YHIGH"] - v["TAG:lavfi.signalstats.YLOW"]}'
}
# holds "A OP B": a float comparison.
holds() { awk "BEGIN {exit !($1)}"; }

scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    for c in Brightness Contrast Saturation; do
        grep -q "$c" "$d/cam-controls.txt" || { echo "libcamera's vimc pipeline lists no $c control (see cam-controls.txt)"; return 1; }
    done
    if sed -n '/"lacking"/,/]/p' "$d/shutterctl.log" | grep -q 'Brightness\|Contrast\|Saturation'; then
        echo "status reports an image control as lacking (see shutterctl.log)"; return 1
    fi
    grep -q '"ok":false' "$d/shutterctl.log" && { echo "a shutterctl command failed (see shutterctl.log)"; return 1; }
    for l in config_bright base dark reset_bright grey vivid contrast_high contrast_low; do
        s=$(stats "$l") || { echo "no photo '$l' (see photos.txt, shutterd.log)"; return 1; }
        eval "set -- $s"; eval "y_$l=$1 sat_$l=$2 sp_$l=$3"
    done
    yb=$y_base sb=$sat_base pb=$sp_base
    holds "$y_config_bright > $yb + 15" || { echo "brightness 0.4 from the config: mean luma $y_config_bright, not above the baseline $yb"; return 1; }
    holds "$y_dark < $yb - 15" || { echo "brightness -0.4 (set): mean luma $y_dark, not below the baseline $yb"; return 1; }
    holds "$y_reset_bright > $yb + 15 && $y_reset_bright - $y_config_bright < 3 && $y_config_bright - $y_reset_bright < 3" ||
        { echo "after reset: mean luma $y_reset_bright, not the config's $y_config_bright"; return 1; }
    holds "$sat_grey < $sb * 0.25" || { echo "saturation 0: mean saturation $sat_grey, not near grey (baseline $sb)"; return 1; }
    holds "$sat_vivid > $sb * 1.2" || { echo "saturation 2: mean saturation $sat_vivid, not above the baseline $sb"; return 1; }
    holds "$sp_contrast_high > $pb + 10" || { echo "contrast 2: luma spread $sp_contrast_high, not above the baseline $pb"; return 1; }
    holds "$sp_contrast_low < $pb - 10" || { echo "contrast 0.5: luma spread $sp_contrast_low, not below the baseline $pb"; return 1; }
    # What a vimc frame's metadata carries (so what `effective`, status and EXIF can show).
    md=$(awk -F' = ' '/^\t/ {sub(/^\t/, "", $1); print $1}' "$d/cam-metadata.txt" | sort -u | tr '\n' ' ' | sed 's/ $//')
    echo "vimc honours Brightness/Contrast/Saturation: mean luma base $yb, config 0.4 $y_config_bright, set -0.4 $y_dark, reset $y_reset_bright; mean saturation base $sb, 0 -> $sat_grey, 2 -> $sat_vivid; luma spread base $pb, contrast 2 -> $sp_contrast_high, 0.5 -> $sp_contrast_low; frame metadata: ${md:-none}; $(ready_figures "$d")"
}
