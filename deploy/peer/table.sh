#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Prints make peer's table from what the VM left on its disk (extracted to DISK): what each
# program itself reported and what ffprobe finds in its files. Row 5 is a check: exit 1
# when it fails (or when a step hit its bound); rows 1-4 are figures.
# Usage: table.sh DISK REPO
set -u
disk=$1; repo=$2
R=$disk/hil/peer/stage1
rp=$disk/rpicam
fail=0
[ -d "$R" ] || { echo "peer: FAIL the VM left no results (no $R)"; exit 1; }

jget() { jq -r "$2" "$1" 2>/dev/null | sed 's/^null$//'; }
# stats: "median worst n" of the numbers on stdin (one a line).
stats() { sort -n | awk '{v[NR]=$1} END { if (!NR) { print "- - 0"; exit } m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.0f %.0f %d\n", m, v[NR], NR }'; }
fmt_stats() { set -- $1; [ "$3" = 0 ] && { echo "none"; return; }; echo "$1 / $2 ms (n=$3)"; }
vfile() { case $1 in /mnt/data/*) echo "$disk/${1#/mnt/data/}" ;; *) echo "$1" ;; esac; }
# probe FILE: "plays=yes|no dur=S frames=N audio=CODEC errs=N"
probe() {
    f=$1
    [ -s "$f" ] || { echo "no file"; return; }
    frames=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$f" 2>/dev/null | head -1)
    # The video stream's own duration (a container's can be stretched by an audio stream on
    # another clock); the container's when the stream has none (fragmented MP4).
    dur=$(ffprobe -v error -select_streams v:0 -show_entries stream=duration -of csv=p=0 "$f" 2>/dev/null | head -1)
    case $dur in ''|N/A) dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f" 2>/dev/null | head -1) ;; esac
    ac=$(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$f" 2>/dev/null | head -1)
    errs=$(ffmpeg -v error -i "$f" -f null - 2>&1 | grep -v -e 'non monotonically increasing dts' -e 'Last message repeated' | grep -c .)
    case ${frames:-0} in ''|*[!0-9]*|0) plays=no ;; *) plays=yes ;; esac
    dur=$(printf '%.1f' "${dur:-0}" 2>/dev/null || echo "?")
    echo "plays $plays, ${dur} s, ${frames:-0} frames${ac:+, $ac}$( [ "$errs" -gt 0 ] && echo ", $errs decode errors")"
}
# ms_between A B: B - A in ms, rounded.
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
ev_time() { awk -v w="$2" '$2 == w || index($0, w) {print $1; exit}' "$1" 2>/dev/null; }

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo "?")
version=$(sh "$repo/deploy/version.sh" 2>/dev/null || cat "$repo/VERSION")
lcv=$(grep -o 'libcamera v[^ ]*' "$R/row5/shutterd.log" 2>/dev/null | head -1)
echo
echo "make peer, $(date -u +%Y-%m-%d), Shutter $version ($commit) vs rpicam-apps v1.13.0 (+ deploy/peer/rpicam-apps-virtual.patch),"
echo "both on Raspberry Pi's libcamera fork v0.7.1+rpt20260429 (${lcv:-?}), camera Virtual0 (libcamera's virtual"
echo "pipeline: 1920x1080 + 4608x2592 NV12 test bars, frames as fast as requests return), QEMU TCG, 2 vCPUs, $(grep MemTotal "$R/vm.txt" 2>/dev/null | awk '{printf "%d MiB", $2/1024}')."
echo

# sd_lost DIR: what Shutter's clip summary says the encoder lost (its log), if anything.
sd_lost() {
    l=$(grep -h 'clip lost' "$1/shutterd.log" 2>/dev/null | tail -1 | sed 's/.*clip lost //')
    [ -n "$l" ] && echo "; its summary: lost $l"
}

# ---- row 1 ----
shutter_row1() {
    d=$R/$1
    [ -f "$d/triggers.txt" ] || { echo "not run"; return; }
    # Each trigger: the first JPG renamed into DCIM (Shutter's write: temp, fsync, rename) after it.
    awk 'FNR == NR { if ($2 == "IN_MOVED_TO" && $3 ~ /\.JPG$/) ev[++n] = $1; next }
         { t = $2; while (i < n && ev[i+1] < t) i++; if (i < n) { i++; printf "%.0f\n", ev[i] - t } }' \
        "$d/watch.txt" "$d/triggers.txt" > "$d/trigger-to-file.txt"
    s=$(stats < "$d/trigger-to-file.txt")
    own=$(for f in "$d"/tap-*.json; do jget "$f" .pressToDurableMs; done | grep . | stats)
    p2e=$(for f in "$d"/tap-*.json; do jget "$f" .pressToExposureMs; done | grep . | stats)
    okn=$(grep -l '"ok":true' "$d"/tap-*.json 2>/dev/null | wc -l)
    size=$(jget "$d/status.json" '.status.lastPhoto | "\(.width)x\(.height)"')
    still=$(jget "$d/status-before.json" '.status.camera.stillStream | if .granted then "still stream \(.size.width)x\(.size.height)" else "no still stream" end')
    echo "$(fmt_stats "$s"), ${size} (${still}); its own request->durable $(fmt_stats "$own"), request->exposure median $(echo "$p2e" | cut -d' ' -f1) ms; ${okn} ok"
}
rpicam_row1() {
    d=$R/$1
    [ -f "$d/triggers.txt" ] || { echo "not run"; return; }
    awk 'FNR == NR { if ($2 == "IN_CLOSE_WRITE") { if (!($3 in ev)) ev[$3] = $1 }; next }
         ($3 in ev) { printf "%.0f\n", ev[$3] - $2 }' "$d/watch.txt" "$d/triggers.txt" > "$d/trigger-to-file.txt"
    s=$(stats < "$d/trigger-to-file.txt")
    f=$(ls "$rp/$1"/*.jpg 2>/dev/null | head -1)
    size=$( [ -n "$f" ] && ffprobe -v error -show_entries stream=width,height -of csv=p=0:s=x "$f" 2>/dev/null | head -1)
    err=$(grep -h 'ERROR' "$d"/rpicam*.log 2>/dev/null | grep -v 'stream role not supported: Raw' | head -1)
    crashes=$(awk '{n++; c[$2]++; if ($3 == "") lost++} END { if (n) { printf "%d times (", n; for (k in c) printf "%sexit %s: %d", (j++ ? ", " : ""), k, c[k]; printf "), %d of them with the photo asked for", lost } }' "$d/crashes.txt" 2>/dev/null)
    echo "$(fmt_stats "$s"), ${size:-no file}${err:+; said: $err}${crashes:+; it crashed $crashes, and was started again each time}"
}
echo "| # | figure | Shutter | rpicam-apps |"
echo "| --- | --- | --- | --- |"
echo "| 1 | trigger -> JPEG whole on disk, median / worst (ms) | \`tap\`, press: $(shutter_row1 row1-shutter-press) | \`--signal -t 0 --zsl\`: $(rpicam_row1 row1-rpicam-zsl) |"
echo "| 1 | | \`tap\`, focused: $(shutter_row1 row1-shutter-focused) | \`--signal -t 0\` (viewfinder, then a mode switch): $(rpicam_row1 row1-rpicam-viewfinder) |"
echo "| 1 | | | \`--immediate --signal\` (one process a photo): $(rpicam_row1 row1-rpicam-immediate) |"

# ---- row 2 ----
shutter_row2() {
    d=$R/$1
    [ -f "$d/events.txt" ] || { echo "not run"; return; }
    f=$(vfile "$(jget "$d/record.json" '.files[0]')")
    sig=$(awk '$1 == "signal" {print $3}' "$d/events.txt")
    ex=$(ev_time "$d/events.txt" "shutterd exited")
    [ -f "$f" ] || f=$(ls -t "$disk"/DCIM/*/SHTR*.MP4 "$disk"/.shutter-pending* 2>/dev/null | head -1)
    durable=$(grep 'durable:' "$d/shutterd.log" 2>/dev/null | grep -v THM | tail -1 | grep -o '[0-9.]* s (' | cut -d' ' -f1)
    echo "$(probe "$f") ($(stat -c %s "$f" 2>/dev/null || echo 0) bytes); reported durable before the end: ${durable:-nothing}$(sd_lost "$d"); exit $(cat "$d/exit.txt" 2>/dev/null) $( [ -n "$ex" ] && [ -n "$sig" ] && echo "$(ms "$sig" "$ex") ms after the signal")"
}
rpicam_row2() {
    d=$R/$1
    [ -f "$d/events.txt" ] || { echo "not run"; return; }
    sig=$(awk '$1 == "signal" {print $3}' "$d/events.txt")
    ex=$(ev_time "$d/events.txt" "exited rc=")
    echo "$(probe "$rp/$1/clip.mp4"); exit $(tail -1 "$d/rc.txt" 2>/dev/null) $( [ -n "$ex" ] && [ -n "$sig" ] && echo "$(ms "$sig" "$ex") ms after the signal")"
}
echo "| 2 | clip killed 5 s in: SIGTERM | $(shutter_row2 row2-shutter-term) | $(rpicam_row2 row2-rpicam-term) |"
echo "| 2 | clip killed 5 s in: SIGKILL | $(shutter_row2 row2-shutter-kill) | $(rpicam_row2 row2-rpicam-kill) |"
echo "| 2 | clip stopped 5 s in: SIGINT (rpicam-vid's own stop; Shutter: as SIGTERM) | | $(rpicam_row2 row2-rpicam-int) |"

# ---- row 3 ----
shutter_row3() {
    d=$R/row3-shutter
    [ -f "$d/triggers.txt" ] || { echo "not run"; return; }
    v=$(for f in "$d"/hold-*.json; do jget "$f" .clipStartOffsetMs; done | grep . | awk '{printf "%s%.0f", (NR > 1 ? ", " : ""), $1}')
    echo "\`hold 3\`: clipStartOffsetMs ${v:-none} ms (first frame's exposure start minus the request, sensor timestamps)"
}
rpicam_row3() {
    d=$R/row3-rpicam-mp4
    refusal=$(grep -h -m1 'does not currently support' "$d/rpicam.log" 2>/dev/null | sed 's/^ERROR: //')
    out="MP4 (\`--codec libav -o clip.mp4 --signal --initial pause\`): exit $(tail -1 "$d/rc.txt" 2>/dev/null), \"${refusal:-no refusal seen}\""
    d=$R/row3-rpicam-h264
    res=""
    for log in "$d"/rpicam-*.log; do
        [ -f "$log" ] || continue
        i=${log##*rpicam-}; i=${i%.log}
        h=$rp/row3-rpicam-h264/clip-$i.h264
        pts=$rp/row3-rpicam-h264/pts-$i.txt
        # s: the frame the signal was seen with; total: frames given to the encoder.
        s=$(awk '/Received signal 10/ {sig = 1; next} sig && /Viewfinder frame/ {print $NF; exit}' "$log")
        total=$(grep -c 'Viewfinder frame' "$log")
        rec=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$h" 2>/dev/null | head -1)
        iv=$(awk '!/^#/ {v[++n] = $1} END { if (n > 1) printf "%.1f", (v[n] - v[1]) / (n - 1) }' "$pts" 2>/dev/null)
        if [ -n "$s" ] && [ -n "$rec" ] && [ -n "$iv" ]; then
            first=$((total - rec))
            res="$res${res:+; }+$((first - s)) frames ($(awk -v f=$((first - s)) -v i="$iv" 'BEGIN{printf "%.0f", f * i}') ms at its ${iv} ms frame interval)"
        else
            res="$res${res:+; }not measured (signal frame ${s:-?}, recorded ${rec:-?}, interval ${iv:-?})"
        fi
    done
    echo "$out; raw H.264 (\`-o clip.h264\`, which it allows): first recorded frame vs the frame the signal arrived with: ${res:-not run}"
}
echo "| 3 | clip start against the trigger | $(shutter_row3) | $(rpicam_row3) |"

# ---- row 4 ----
shutter_row4() {
    d=$R/row4-shutter
    [ -f "$d/events.txt" ] || { echo "not run"; return; }
    set -- $(cat "$d/time.txt" 2>/dev/null | tail -1) ; wall=${1:-?}; us=${2:-?}; sy=${3:-?}; rss=${4:-?}
    set -- $(cat "$d/stat-before.txt" 2>/dev/null); b=$(awk -v u="${1:-0}" -v s="${2:-0}" 'BEGIN{print u + s}')
    set -- $(cat "$d/stat-after.txt" 2>/dev/null); a=$(awk -v u="${1:-0}" -v s="${2:-0}" 'BEGIN{print u + s}'); hwm=${3:-?}
    f=$(vfile "$(jget "$d/hold.json" '.files[0]')")
    [ -f "$f" ] || f=$(ls "$disk"/DCIM/*/SHTR*.MP4 2>/dev/null | tail -1)
    dropped=$(jget "$d/status.json" .status.counters.droppedFrames)
    echo "CPU $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f", a - b}') s for the clip (request to complete), $(awk -v u="$us" -v s="$sy" 'BEGIN{printf "%.1f", u + s}') s whole process (${wall} s wall); peak RSS $((rss / 1024)) MiB; $(probe "$f"); camera frames dropped (status) ${dropped:-?}$(sd_lost "$d")"
}
rpicam_row4() {
    d=$R/row4-rpicam
    [ -f "$d/events.txt" ] || { echo "not run"; return; }
    set -- $(cat "$d/time.txt" 2>/dev/null | tail -1) ; wall=${1:-?}; us=${2:-?}; sy=${3:-?}; rss=${4:-0}
    closing=$(grep -o 'frames displayed [0-9]*, dropped [0-9]*' "$d/rpicam.log" | tail -1)
    echo "CPU $(awk -v u="$us" -v s="$sy" 'BEGIN{printf "%.1f", u + s}') s whole process (${wall} s wall); peak RSS $((rss / 1024)) MiB; $(probe "$rp/row4-rpicam/clip.mp4"); camera frames $(grep -c 'Viewfinder frame' "$d/rpicam.log"); its own count: ${closing:-none} (preview frames)"
}
echo "| 4 | 60 s of 1080p30 H.264 + AAC (libx264 ultrafast + zerolatency, 10 Mbit/s) | $(shutter_row4) | $(rpicam_row4) |"

# ---- row 5: the check ----
row5() {
    d=$R/row5
    [ -f "$d/status.json" ] || { echo "FAIL: no status (see $d/step.log)"; return 1; }
    grep -q '^/opt/rpi-libcamera/.*/libcamera\.so' "$d/maps.txt" || { echo "FAIL: shutterd did not map the fork's libcamera (maps: $(tr '\n' ' ' < "$d/maps.txt"))"; return 1; }
    ! grep -q '^/usr/lib/.*/libcamera\.so' "$d/maps.txt" || { echo "FAIL: Debian's libcamera is mapped too"; return 1; }
    case $lcv in *rpt*) ;; *) echo "FAIL: the log names '${lcv:-no libcamera version}', not the fork's"; return 1 ;; esac
    model=$(jget "$d/status.json" .status.camera.model)
    [ "$model" = imx708-virtual ] || { echo "FAIL: camera '$model', expected imx708-virtual"; return 1; }
    [ "$(jget "$d/status.json" .status.camera.stillStream.granted)" = true ] \
        || { echo "FAIL: no still stream beside video: $(jget "$d/status.json" .status.camera.stillStream.reason)"; return 1; }
    still=$(jget "$d/status.json" '.status.camera.stillStream.size | "\(.width)x\(.height)"')
    [ "$still" = 4608x2592 ] || { echo "FAIL: still stream $still, expected 4608x2592"; return 1; }
    asked=$(jget "$d/status.json" '.status.camera.stillSizesAsked | map(if type == "object" then "\(.width)x\(.height)" else . end) | join(",")')
    case ",$asked," in *,4608x2592,*) ;; *) echo "FAIL: still sizes asked '$asked' lack 4608x2592"; return 1 ;; esac
    video=$(jget "$d/status.json" '.status.camera.videoSize | "\(.width)x\(.height)"')
    [ "$(jget "$d/next.json" .ok)" = true ] || { echo "FAIL: camera next: $(cat "$d/next.json")"; return 1; }
    m2=$(jget "$d/status-next.json" .status.camera.model)
    [ "$m2" = ov5647-virtual ] || { echo "FAIL: after camera next the camera is '$m2', expected ov5647-virtual"; return 1; }
    [ "$(jget "$d/back.json" .ok)" = true ] || { echo "FAIL: camera imx708-virtual (back): $(cat "$d/back.json")"; return 1; }
    [ "$(jget "$d/tap.json" .ok)" = true ] || { echo "FAIL: tap after the switches: $(cat "$d/tap.json")"; return 1; }
    errors=$(grep -E '\] +ERROR ' "$d/shutterd.log" | head -2)
    [ -z "$errors" ] || { echo "FAIL: libcamera logged an ERROR: $errors"; return 1; }
    echo "PASS: shutterd (linked against Debian's 0.7.1) on $(grep -m1 '^/opt/rpi-libcamera/.*/libcamera\.so' "$d/maps.txt") (${lcv}); video $video + still stream $still granted (still sizes asked: $asked); \`camera next\` -> ov5647-virtual, back -> imx708-virtual, a tap: $(jget "$d/tap.json" '.files[0]' | xargs basename 2>/dev/null)"
}
r5=$(row5) || fail=1
echo "| 5 | Shutter on the fork: two streams + \`camera next\` | $r5 | (not applicable) |"
echo

# Facts about the run itself.
vimc=$(grep -m1 -i 'error\|only supports' "$R/list-cameras-vimc.txt" 2>/dev/null)
echo "rpicam-still --list-cameras beside vimc: ${vimc:-$(head -1 "$R/list-cameras-vimc.txt" 2>/dev/null)}"
grep -h 'segfault' "$R/dmesg.log" 2>/dev/null | sed 's/^/VM kernel: /'
for t in "$R"/*/timeout; do
    [ -f "$t" ] || continue
    s=$(basename "$(dirname "$t")")
    echo "peer: FAIL step $s hit its bound ($(cat "$t")); see $(dirname "$t")/step.log"
    fail=1
done
awk '{print "  step time: " $0}' "$R/steps.log" 2>/dev/null | grep ' end ' | sed 's/^  step time: [0-9]* step /  step /'
echo "row 5: $r5"
[ "$fail" = 0 ]
