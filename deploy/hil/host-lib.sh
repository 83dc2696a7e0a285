# SPDX-License-Identifier: BSD-2-Clause
# Host-side helpers for the scenario files (sourced by run.sh). Each scenario file defines
# scenario_run (boots the VM one or more times) and scenario_check (prints one reason line,
# returns 0 for pass). $OUT is .build/hil/<scenario>, $KERNEL and $INITRD the VM images.

# hil_new_disk: a fresh ext4 data disk for the scenario (the service's storage).
hil_new_disk() {
    rm -f "$OUT/disk.img"
    truncate -s 256M "$OUT/disk.img"
    mkfs.ext4 -q -F -L shutter "$OUT/disk.img"
}

# hil_boot STAGE [KILL_MARKER KILL_DELAY_S]: boots the VM on the scenario's disk with
# `hil.scenario=$SCENARIO hil.stage=STAGE`; the serial console goes to serial-STAGE.log.
# With KILL_MARKER, QEMU is killed (SIGKILL: a power cut) KILL_DELAY_S seconds after the
# marker appears on the console. Returns 0 when the VM powered off or was killed as asked.
# $HIL_APPEND adds kernel command line arguments (hil.virtual=1: the second root's virtual
# cameras; hil.bigcamera=1, hil.noheap=1, udmabuf.size_limit_mb=N).
# $HIL_ARCH (x86_64, arm64) picks the machine: qemu-system-x86_64, or qemu-system-aarch64
# -M virt -cpu cortex-a72 (make hil-arm64); both TCG.
# Bounds: the whole stage HIL_BOOT_TIMEOUT s (default 300, arm64 1800); the boot up to the
# scenario 300 s (arm64 900); then each step the VM script announces (vm/lib.sh `step NAME
# SECONDS`: "HIL-STEP SECONDS NAME" on the console) its own SECONDS. Past a bound QEMU is
# killed and $OUT/hung names the step ("stage 1: step 'tap: READY' still running after 240 s").
hil_boot() {
    stage=$1; marker=${2:-}; delay=${3:-0}
    log="$OUT/serial-$stage.log"
    : > "$log"
    append="quiet panic=-1 hil.scenario=$SCENARIO hil.stage=$stage${HIL_BREAK:+ hil.break=$HIL_BREAK}${HIL_APPEND:+ $HIL_APPEND}"
    case ${HIL_ARCH:-x86_64} in
    arm64)
        limit=${HIL_BOOT_TIMEOUT:-1800}; boot_bound=900
        qemu-system-aarch64 -M virt -cpu cortex-a72 -accel tcg -m 1536 -smp 2 -nographic -no-reboot \
            -kernel "$KERNEL" -initrd "$INITRD" -append "console=ttyAMA0 $append" \
            -drive "file=$OUT/disk.img,format=raw,if=virtio" \
            < /dev/null > "$log" 2>&1 & ;;
    *)
        limit=${HIL_BOOT_TIMEOUT:-300}; boot_bound=300
        qemu-system-x86_64 -accel tcg -m 1536 -smp 2 -nographic -no-reboot \
            -kernel "$KERNEL" -initrd "$INITRD" -append "console=ttyS0 $append" \
            -drive "file=$OUT/disk.img,format=raw,if=virtio" \
            < /dev/null > "$log" 2>&1 & ;;
    esac
    qpid=$!
    start=$(date +%s)
    killed=0
    step_name="boot"; step_bound=$boot_bound; step_start=$start; seen=0
    while kill -0 "$qpid" 2>/dev/null; do
        now=$(date +%s)
        # The newest step the VM announced starts its own bound.
        # (init's "HIL: ready for scenario" ends the boot: the stage's bound then holds.)
        n=$(grep -c -e '^HIL-STEP ' -e '^HIL: ready for scenario' "$log")
        if [ "$n" -gt "$seen" ]; then
            seen=$n
            set -- $(grep -e '^HIL-STEP ' -e '^HIL: ready for scenario' "$log" | tail -1 | tr -d '\r')
            if [ "$1" = HIL-STEP ]; then step_bound=$2; shift 2; step_name="$*"
            else step_bound=$limit; step_name="$SCENARIO, before its first step"; fi
            step_start=$now
        fi
        hung=""
        if [ $(( now - step_start )) -ge "$step_bound" ]; then
            hung="stage $stage: step '$step_name' still running after $step_bound s"
        elif [ $(( now - start )) -ge "$limit" ]; then
            hung="stage $stage: over its $limit s bound, in step '$step_name'"
        fi
        if [ -n "$hung" ]; then
            echo "hil_boot: $hung" >> "$log"
            echo "$hung" > "$OUT/hung"
            kill -9 "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null
            return 1
        fi
        if [ -n "$marker" ] && grep -q "$marker" "$log"; then
            sleep "$delay"
            kill -9 "$qpid" 2>/dev/null
            killed=1
            echo "hil_boot: killed QEMU ${delay} s after '$marker'" >> "$OUT/host.log"
            break
        fi
        sleep 0.2
    done
    wait "$qpid" 2>/dev/null
    echo "stage $stage: $(( $(date +%s) - start )) s wall" >> "$OUT/host.log"
    [ "$killed" = 1 ] && return 0
    grep -q "HIL: done" "$log"
}

# hil_extract: copies the disk's files to $OUT/disk/ (debugfs reads ext4 images as a plain
# user, no loop device needed) and checks the filesystem first with e2fsck -n.
hil_extract() {
    rm -rf "$OUT/disk"; mkdir -p "$OUT/disk"
    e2fsck -fn "$OUT/disk.img" > "$OUT/fsck.log" 2>&1; echo "e2fsck rc=$?" >> "$OUT/fsck.log"
    debugfs -R "rdump / $OUT/disk" "$OUT/disk.img" > "$OUT/debugfs.log" 2>&1
}

# vm_file PATH: a file the VM left under /mnt/data/hil/$SCENARIO/ (e.g. stage1/led.log).
vm_file() { echo "$OUT/disk/hil/$SCENARIO/$1"; }

# button_ms WHAT [N]: the VM time (ms) of the Nth "press"/"release"/... line of button.log.
button_ms() { awk -v w="$2" -v n="${3:-1}" '$2 == w && ++c == n {print $1}' "$1/button.log"; }

# led_at FILE MS COL: the LED's value (COL 2 = status, 3 = flash) at VM time MS.
led_at() { awk -v t="$2" -v c="$3" '$1 <= t {v = $c} END {print v + 0}' "$1"; }

# led_edges FILE FROM TO COL: how many times the LED changed between FROM and TO (ms).
led_edges() {
    awk -v a="$2" -v b="$3" -v c="$4" 'NR > 1 && $1 > a && $1 <= b && $c != prev {n++} {prev = $c} END {print n + 0}' "$1"
}

# led_dark_blips FILE FROM TO: off periods of the status LED between FROM and TO that end
# with the LED back on, as "start:length_ms" (a photo blip is ~100 ms of dark).
led_dark_blips() {
    awk -v a="$2" -v b="$3" '$1 > a && $1 <= b { if ($2 == 0 && prev == 1) s = $1; if ($2 == 1 && prev == 0 && s) { printf "%d:%d ", s, $1 - s; s = 0 } } {prev = $2}' "$1"
}

# led_on_groups FILE FROM TO: the status LED's rising edges between FROM and TO grouped by
# pauses over 1.2 s, as group sizes ("2 2 2" is the no-camera code repeating).
led_on_groups() {
    awk -v a="$2" -v b="$3" '$1 > a && $1 <= b && $2 == 1 && prev == 0 { if (last && $1 - last > 1200) { printf "%d ", n; n = 0 } n++; last = $1 } {prev = $2} END {if (n) printf "%d", n}' "$1"
}

# probe_video FILE: "codec frames duration" of the first video stream (frames decoded).
probe_video() {
    ffprobe -v error -select_streams v:0 -count_frames \
        -show_entries stream=codec_name,nb_read_frames:format=duration -of default=nw=1:nk=1 "$1" | tr '\n' ' '
}
# probe_audio_codec FILE: the first audio stream's codec ("aac"), empty if none.
probe_audio_codec() { ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$1"; }
# audio_stat FILE: "RMS frequency" of the clip's audio, decoded to mono WAV and measured by sox.
audio_stat() {
    ffmpeg -v error -y -i "$1" -map 0:a:0 -ac 1 "$OUT/audio.wav" &&
    sox "$OUT/audio.wav" -n stat 2>&1 | awk '/RMS +amplitude/{r=$3} /Rough +frequency/{f=$3} END{print r, f}'
}
# decode_errors FILE: what ffmpeg says decoding the whole file (to null), minus the null
# muxer's complaint about the variable frame rate (its 1/fps time base rounds close frames to
# the same tick; the file's own 1/90000 timestamps are increasing).
decode_errors() { ffmpeg -v error -i "$1" -f null - 2>&1 | grep -v -e '^\[null @.*non monotonically increasing dts' -e 'Last message repeated' | head -3; }
decodes() { [ -z "$(decode_errors "$1")" ]; }

single_boot() { hil_new_disk; hil_boot 1 && hil_extract; }
# files EXT: the service's files on the extracted disk.
files() { ls "$OUT"/disk/DCIM/*/SHTR*."$1" 2>/dev/null; }
# json_get FILE FILTER: a value from a JSON file (`shutterctl status`) by jq filter
# (`.lastPhoto.moment`), strings bare, "" when absent or the file is not JSON.
json_get() { jq -r "$2" "$1" 2>/dev/null | sed "s/^null$//"; }
# ready_figures DIR: "READY at Ns after boot (Ms after start)" from notify.log (the first start).
ready_figures() {
    awk '$2 == "START" && !s {s = $1} /READY=1/ && !r {r = $1} END { if (r) printf "READY %.1f s after boot, %.1f s after start", r / 1000, (r - s) / 1000; else printf "never READY" }' "$1/notify.log" 2>/dev/null
}
# vm_sane DIR: the VM script ran and the service got READY; else prints why.
vm_sane() {
    [ -f "$1/rc" ] || { echo "the VM left no result (see serial-1.log)"; return 1; }
    grep -q 'READY=1' "$1/notify.log" 2>/dev/null || { echo "shutterd never sent READY=1 (see $1/shutterd.log)"; return 1; }
}
