# SPDX-License-Identifier: BSD-2-Clause
# One step of make peer in the VM (run by peer.sh under a bound): sh peer-step.sh STEP.
# Writes into $PEER_BASE/STEP/; what it starts is listed in /tmp/peer-pids-STEP (killed by
# peer.sh when the bound is hit). Times are CLOCK_MONOTONIC ms from peer-clock.
. /hil/lib.sh
. /hil/peer.env
step=$1
D=$PEER_BASE/$step
mkdir -p "$D"
HIL_OUT=$D
export HIL_OUT
# Both programs on the fork's libcamera (Shutter's shutterd was linked against Debian's 0.7.1).
export LD_LIBRARY_PATH=$PEER_LDPATH LD_BIND_NOW=1
OUT=/mnt/data/rpicam/$step
mkdir -p "$OUT"

track() { echo "$1" >> "/tmp/peer-pids-$step"; }
# shutterctl links no libcamera: it runs without the fork's path and without LD_BIND_NOW
# (which would only slow its start, and that start is inside row 1's trigger-to-file time).
shutterctl() { env -u LD_BIND_NOW -u LD_LIBRARY_PATH /usr/bin/shutterctl "$@"; }
clock() { peer-clock now; }
log() { echo "$(clock) $*" >> "$D/events.txt"; }

# --- Shutter ------------------------------------------------------------------------------
# The same camera (Virtual0, by model), the same sizes as rpicam-apps, JPEG quality 93
# (rpicam-still's default), H.264 through libx264 ultrafast + zerolatency (rpicam-vid
# --low-latency), 10 Mbit/s, AAC 128 kbit/s stereo 48 kHz from the loopback.
SD_CAMERA='"camera": { "model": "imx708-virtual" }'
SD_STILL='"width": 4608, "height": 2592, "quality": 93'
SD_VIDEO='"video": { "width": 1920, "height": 1080, "fps": 30, "bitrateKbps": 10000, "keyframeIntervalMs": 1000, "preset": "ultrafast", "maxSeconds": 120 }'
SD_AUDIO_ON='"audio": { "enabled": true, "device": "hw:Loopback,1,0", "sampleRate": 48000, "channels": 2, "bitrateKbps": 128 }'
SD_AUDIO_OFF='"audio": { "enabled": false }'

# sd_start SECTIONS [time]: shutterd on the qemu board with its storage on the data disk;
# sd_notify messages to notify.log (lib.sh's wait_ready reads it). With "time", under GNU
# time (whole-process CPU seconds and peak RSS in time.txt). Sets SD_PID (shutterd itself).
sd_start() {
    rm -f /run/hil-notify.sock
    socat -u UNIX-RECVFROM:/run/hil-notify.sock,fork SYSTEM:"sh /hil/notify-line.sh" 2>> "$D/socat.log" &
    track $!
    wait_for 10 test -S /run/hil-notify.sock
    echo "{ $1 }" > "$D/config.json"
    echo "$(now_ms) START" >> "$D/notify.log"
    if [ "${2:-}" = time ]; then
        NOTIFY_SOCKET=/run/hil-notify.sock /usr/bin/time -f "%e %U %S %M" -o "$D/time.txt" \
            shutterd --board qemu --storage /mnt/data --log-level info --config "$D/config.json" \
            >> "$D/shutterd.log" 2>&1 &
        SD_WRAP=$!
        track "$SD_WRAP"
        wait_for 10 pidof shutterd
        SD_PID=$(pidof shutterd)
    else
        NOTIFY_SOCKET=/run/hil-notify.sock shutterd --board qemu --storage /mnt/data --log-level info \
            --config "$D/config.json" >> "$D/shutterd.log" 2>&1 &
        SD_PID=$!
        SD_WRAP=$SD_PID
    fi
    track "$SD_PID"
    log "shutterd started pid $SD_PID"
}
# sd_wait_exit SECONDS: until shutterd is gone; its exit code (or GNU time's) in exit.txt.
sd_wait_exit() {
    if wait_for "$1" sh -c "! kill -0 $SD_PID"; then
        log "shutterd exited"
        wait "$SD_WRAP" 2>/dev/null; echo "$?" > "$D/exit.txt"
    else
        log "shutterd still running $1 s after the signal"; echo "hung" > "$D/exit.txt"
    fi
}
sd_stop() { kill -TERM "$SD_PID" 2>/dev/null; sd_wait_exit 180; }
sd_ready() { wait_ready 300 || { log "shutterd not READY after 300 s"; return 1; }; log "READY"; }

# --- rpicam-apps --------------------------------------------------------------------------
# Its viewfinder by default is half the sensor's active area (2304x1296), a size the virtual
# camera lacks (it would give 4608x2592): 1920x1080 like Shutter's video stream instead.
# The camera by index: rpicam-apps sorts cameras by id, descending (peer.sh found Virtual0's).
RP_CAM=$(cat /tmp/peer-rpicam-camera 2>/dev/null || echo 0)
RP_STILL="-n --no-raw --camera $RP_CAM --viewfinder-width 1920 --viewfinder-height 1080"
RP_VIDEO="-n --no-raw --camera $RP_CAM --width 1920 --height 1080 --framerate 30 --codec libav --libav-video-codec libx264 --low-latency --intra 30 -b 10000000"
RP_AUDIO="--libav-audio --audio-source alsa --audio-device hw:Loopback,1,0 --audio-channels 2 --audio-samplerate 48000 --audio-bitrate 128kbps"
# rp_start LOG PROGRAM ARGS...: in the background, verbose (-v 2: per-frame lines, its own
# figures at exit); sets RP_PID.
rp_start() {
    _log=$1; shift
    "$@" -v 2 > "$_log" 2>&1 &
    RP_PID=$!
    track "$RP_PID"
    log "started $* pid $RP_PID"
}
# rp_wait_exit SECONDS: until RP_PID is gone; its exit code in rc.txt (appended).
rp_wait_exit() {
    if wait_for "$1" sh -c "! kill -0 $RP_PID"; then
        wait "$RP_PID" 2>/dev/null; _rc=$?
    else
        _rc=hung; kill -9 "$RP_PID" 2>/dev/null
    fi
    log "exited rc=$_rc"
    echo "$_rc" >> "$D/rc.txt"
}
# rp_wait_log SECONDS PATTERN LOG: until PATTERN is in LOG; 1 at once if the program ended.
rp_wait_log() {
    _deadline=$(( $(now_ms) + $1 * 1000 ))
    until grep -q "$2" "$3" 2>/dev/null; do
        kill -0 "$RP_PID" 2>/dev/null || { log "ended before '$2'"; return 1; }
        [ "$(now_ms)" -ge "$_deadline" ] && { log "no '$2' after $1 s"; return 1; }
        usleep 50000
    done
}
frames_logged() { grep -c 'Viewfinder frame' "$1" 2>/dev/null || echo 0; }

# --- the steps ----------------------------------------------------------------------------
case $step in

# Row 5: Shutter's release shutterd (linked against Debian's 0.7.1) on the fork's library:
# the press moment's two streams on Virtual0, then `camera next` to Virtual1 and back, a tap.
row5)
    sd_start "$SD_CAMERA, \"video\": { \"width\": 1920, \"height\": 1080, \"fps\": 10 }, \"still\": { \"moment\": \"press\", $SD_STILL }, $SD_AUDIO_OFF"
    sd_ready
    sleep 2
    grep -o '/[^ ]*libcamera[^ ]*\.so[^ ]*' "/proc/$SD_PID/maps" | sort -u > "$D/maps.txt"
    shutterctl status > "$D/status.json" 2>&1
    shutterctl camera > "$D/cameras.json" 2>&1
    shutterctl camera next > "$D/next.json" 2>&1
    sleep 1
    shutterctl status > "$D/status-next.json" 2>&1
    shutterctl camera imx708-virtual > "$D/back.json" 2>&1
    sleep 1
    shutterctl status > "$D/status-back.json" 2>&1
    shutterctl tap > "$D/tap.json" 2>&1
    sd_stop
    ;;

# Row 1, Shutter: `shutterctl tap`, still.moment press (the frame of the request from the
# still stream beside video) or focused (a still by a mode switch after the request).
row1-shutter-press|row1-shutter-focused)
    moment=${step#row1-shutter-}
    mkdir -p /mnt/data/DCIM/100SHUTR
    peer-clock watch /mnt/data/DCIM/100SHUTR > "$D/watch.txt" &
    track $!
    sd_start "$SD_CAMERA, \"video\": { \"width\": 1920, \"height\": 1080, \"fps\": 30 }, \"still\": { \"moment\": \"$moment\", $SD_STILL }, $SD_AUDIO_OFF"
    sd_ready
    sleep 3
    shutterctl status > "$D/status-before.json" 2>&1
    i=0
    while [ "$i" -lt "$PEER_N" ]; do
        i=$((i + 1))
        t=$(clock)
        shutterctl tap > "$D/tap-$i.json" 2>&1
        echo "$i $t $(clock)" >> "$D/triggers.txt"
        sleep 1
    done
    shutterctl status > "$D/status.json" 2>&1
    sd_stop
    ;;

# Row 1, rpicam-still in its signal mode: -t 0 --signal, a SIGUSR1 per photo, with the
# viewfinder running (it switches to the still mode for each photo and back), or --zsl (the
# still stream beside the viewfinder, no switch); SIGUSR2 ends it.
row1-rpicam-viewfinder|row1-rpicam-zsl)
    extra=""; [ "$step" = row1-rpicam-zsl ] && extra="--zsl"
    peer-clock watch "$OUT" > "$D/watch.txt" &
    track $!
    # rp_vf N: rpicam-still in signal mode, its next photo numbered N; until its viewfinder runs.
    rp_vf() {
        rp_start "$D/rpicam-$1.log" rpicam-still $RP_STILL --signal -t 0 $extra --framestart "$1" -o "$OUT/still%03d.jpg"
        RP_LOG=$D/rpicam-$1.log
        rp_wait_log 120 'Viewfinder frame' "$RP_LOG"
    }
    rp_vf 0 || { rp_wait_exit 5; exit 1; }
    sleep 3
    i=0
    while [ "$i" -lt "$PEER_N" ]; do
        i=$((i + 1))
        name=$(printf 'still%03d.jpg' $((i - 1)))
        if ! t=$(peer-clock kill 10 "$RP_PID" 2>/dev/null); then
            # It ended before this photo's signal (a crash): counted, started again, photo retried.
            rp_wait_exit 5
            echo "$i $(tail -1 "$D/rc.txt") before-signal" >> "$D/crashes.txt"
            [ "$(wc -l < "$D/crashes.txt")" -gt $((PEER_N * 2)) ] && { log "too many crashes"; break; }
            rp_vf $((i - 1)) || break
            sleep 3
            i=$((i - 1))
            continue
        fi
        echo "$i $t $name" >> "$D/triggers.txt"
        wait_for 120 sh -c "grep -q ' $name\$' $D/watch.txt || ! kill -0 $RP_PID"
        if ! kill -0 "$RP_PID" 2>/dev/null; then
            # It ended (a crash): counted, and started again for the next photo.
            rp_wait_exit 5
            echo "$i $(tail -1 "$D/rc.txt")" >> "$D/crashes.txt"
            [ "$i" -lt "$PEER_N" ] && { rp_vf "$i" || break; sleep 3; }
            continue
        fi
        grep -q " $name\$" "$D/watch.txt" || { log "$name not written 120 s after the signal"; break; }
        # Until the viewfinder runs again (a signal while it reconfigures would be lost).
        n=$(frames_logged "$RP_LOG")
        wait_for 120 sh -c "[ \$(grep -c 'Viewfinder frame' $RP_LOG) -gt $((n + 2)) ] || ! kill -0 $RP_PID"
        sleep 1
    done
    if kill -0 "$RP_PID" 2>/dev/null; then
        peer-clock kill 12 "$RP_PID" > /dev/null
        rp_wait_exit 60
    fi
    ;;

# Row 1, rpicam-still --immediate --signal: configured for the still, the camera started by
# the signal, one photo, exit: one process per photo.
row1-rpicam-immediate)
    peer-clock watch "$OUT" > "$D/watch.txt" &
    track $!
    i=0
    while [ "$i" -lt "$PEER_N" ]; do
        i=$((i + 1))
        name=$(printf 'still%03d.jpg' $((i - 1)))
        rp_start "$D/rpicam-$i.log" rpicam-still $RP_STILL --immediate --signal --framestart $((i - 1)) -o "$OUT/still%03d.jpg"
        rp_wait_log 120 'Still capture setup complete' "$D/rpicam-$i.log" || { rp_wait_exit 5; break; }
        sleep 1
        t=$(peer-clock kill 10 "$RP_PID") || break
        echo "$i $t $name" >> "$D/triggers.txt"
        rp_wait_exit 120
    done
    ;;

# Row 2: a clip killed 5 s after it began recording. Shutter: `record start` (its reply
# names the clip once it has its name), then SIGTERM or SIGKILL to shutterd.
row2-shutter-term|row2-shutter-kill)
    sig=15; [ "$step" = row2-shutter-kill ] && sig=9
    sd_start "$SD_CAMERA, $SD_VIDEO, \"still\": { \"moment\": \"focused\", $SD_STILL }, $SD_AUDIO_ON"
    sd_ready
    sleep 3
    shutterctl record start > "$D/record.json" 2>&1
    log "recording"
    sleep 5
    t=$(peer-clock kill "$sig" "$SD_PID")
    echo "signal $sig $t" >> "$D/events.txt"
    sd_wait_exit 300
    sync
    ;;

# Row 2, rpicam-vid --codec libav -o clip.mp4 (libx264 + AAC from the loopback): recording
# from its first frame given to the encoder; SIGTERM, SIGKILL, or SIGINT (its own stop).
row2-rpicam-term|row2-rpicam-kill|row2-rpicam-int)
    case $step in *term) sig=15 ;; *kill) sig=9 ;; *) sig=2 ;; esac
    rp_start "$D/rpicam.log" rpicam-vid $RP_VIDEO $RP_AUDIO -t 0 -o "$OUT/clip.mp4"
    rp_wait_log 120 'Video start timestamp' "$D/rpicam.log" || { rp_wait_exit 5; exit 1; }
    log "recording"
    sleep 5
    t=$(peer-clock kill "$sig" "$RP_PID")
    echo "signal $sig $t" >> "$D/events.txt"
    rp_wait_exit 300
    sync
    ;;

# Row 3, Shutter: `shutterctl hold 3`, its reply's clipStartOffsetMs (the first frame's
# exposure start minus the request, from the sensor timestamps).
row3-shutter)
    sd_start "$SD_CAMERA, $SD_VIDEO, \"still\": { \"moment\": \"focused\", $SD_STILL }, $SD_AUDIO_ON"
    sd_ready
    sleep 3
    i=0
    while [ "$i" -lt "$PEER_N3" ]; do
        i=$((i + 1))
        echo "$i $(clock)" >> "$D/triggers.txt"
        shutterctl hold 3 > "$D/hold-$i.json" 2>&1
        sleep 2
    done
    sd_stop
    ;;

# Row 3, rpicam-vid: signal-toggled recording into MP4 (--signal --initial pause), which
# its libav encoder refuses; then the same into a raw H.264 stream (the output it allows
# pause for), SIGUSR1 3 s after the first frame, SIGINT 6 s later. Its log (-v 2) has the
# signal and every frame in order; the stream has what was recorded.
row3-rpicam-mp4)
    rp_start "$D/rpicam.log" rpicam-vid $RP_VIDEO $RP_AUDIO --signal --initial pause -t 10000 -o "$OUT/clip.mp4"
    rp_wait_exit 120
    ;;
row3-rpicam-h264)
    i=0
    while [ "$i" -lt "$PEER_N3" ]; do
        i=$((i + 1))
        rp_start "$D/rpicam-$i.log" rpicam-vid $RP_VIDEO --signal --initial pause -t 0 -o "$OUT/clip-$i.h264" --save-pts "$OUT/pts-$i.txt"
        rp_wait_log 120 'Video start timestamp' "$D/rpicam-$i.log" || { rp_wait_exit 5; break; }
        sleep 3
        t=$(peer-clock kill 10 "$RP_PID")
        echo "$i $t" >> "$D/triggers.txt"
        sleep 6
        peer-clock kill 2 "$RP_PID" > /dev/null
        rp_wait_exit 300
    done
    ;;

# Row 4: 60 s of 1080p30 H.264 + AAC. Shutter: `shutterctl hold 60` on a service started
# under GNU time (whole process) and /proc before/after the clip; rpicam-vid -t 60000 under
# GNU time.
row4-shutter)
    sd_start "$SD_CAMERA, $SD_VIDEO, \"still\": { \"moment\": \"focused\", $SD_STILL }, $SD_AUDIO_ON" time
    sd_ready
    sleep 3
    peer-clock stat "$SD_PID" > "$D/stat-before.txt"
    log "hold 60"
    shutterctl hold 60 > "$D/hold.json" 2>&1
    log "hold replied"
    # A reply that came before the clip was complete (the client's own bound): wait for it.
    wait_for 900 grep -q 'durable: .* complete' "$D/shutterd.log" || log "clip not complete 900 s after the reply"
    log "clip complete"
    peer-clock stat "$SD_PID" > "$D/stat-after.txt"
    shutterctl status > "$D/status.json" 2>&1
    sd_stop
    ;;
row4-rpicam)
    /usr/bin/time -f "%e %U %S %M" -o "$D/time.txt" rpicam-vid $RP_VIDEO $RP_AUDIO -t 60000 -o "$OUT/clip.mp4" -v 2 \
        > "$D/rpicam.log" 2>&1 &
    RP_PID=$!
    track "$RP_PID"
    wait_for 10 pidof rpicam-vid && track "$(pidof rpicam-vid)"
    log "started"
    rp_wait_exit 1200
    ;;

*) echo "peer-step: unknown step $step"; exit 64 ;;
esac
