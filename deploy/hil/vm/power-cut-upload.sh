# SPDX-License-Identifier: BSD-2-Clause
# power-cut-upload: the upload queue through a power cut. shutterd runs with --no-connector
# and the uploads in `shutterd --connector` beside it, as the package's two units run them;
# rclone's remote is a `local` one, a folder on the same ext4 disk as the card
# (nas:/mnt/data/nas/garden), so the cut hits the card, the queue's records and the copies.
# Stage 1 raises the page cache's writeback delays first (dirty_expire_centisecs and
# dirty_writeback_centisecs to an hour): whatever rclone wrote is still only in memory at the
# cut unless someone synced it, so a copy the service trusted without a sync is lost on every
# run, not by luck. It takes 4 photos (the button, hil-pull), starts the connector, waits
# until it has verified them (one batch), takes 2 more, and once a batch of those is under way
# (status.upload.current) prints HIL-CUT on the console with the records as the VM sees them
# (HIL-REC) and the remote's files (HIL-NAS); the host kills QEMU 2 s later.
# Stage 2 boots on the same disk, starts shutterd and the connector again and waits until
# the queue settles: every photo verified, nothing waiting, twice 5 s apart (240 s at most).
. /hil/lib.sh

NAS=/mnt/data/nas/garden
PHOTOS_BEFORE=4
PHOTOS=6
# 40k: the cut lands in a batch (a 114 KB photo is otherwise verified well inside the 2 s before it).
HIL_CONFIG='"upload": { "enabled": true, "remote": "nas:'$NAS'", "rcloneConfig": "/tmp/rclone.conf", "layout": "dcf", "bandwidth": "40k" }, "audio": { "enabled": false }'
printf '[nas]\ntype = local\n' > /tmp/rclone.conf

# connector_start / connector_stop: `shutterd --connector` (shutterd-connector.service's
# process), its log in connector.log at debug level (each rclone command's time). Under the
# emulator each command costs seconds (rclone runs at the lowest CPU priority beside the
# camera): the polls below are slow and there is no LED sampler, to leave it the CPU.
connector_start() {
    shutterd --connector --board qemu --config /tmp/hil-config.json --storage /mnt/data \
        --control-socket /run/shutter/control.sock --log-level debug >> "$HIL_OUT/connector.log" 2>&1 &
    HIL_CONNECTOR=$!
}
connector_stop() {
    kill -TERM "$HIL_CONNECTOR" 2>/dev/null
    wait_for 30 sh -c "! kill -0 $HIL_CONNECTOR" || { echo "the connector ignored SIGTERM"; kill -9 "$HIL_CONNECTOR"; }
    wait "$HIL_CONNECTOR" 2>/dev/null; echo "connector exit $?" >> "$HIL_OUT/notify.log"
}
# upload_field NAME: a number of `shutterctl upload status` (verifiedFiles, waitingFiles).
upload_field() {
    shutterctl upload status 2>/dev/null | sed -n "s/.*\"$1\" *: *\([0-9]*\).*/\1/p" | head -1
}
# batch_under_way: status.upload.current is there (a batch is being sent).
batch_under_way() { shutterctl upload status 2>/dev/null | grep -q '"current" *: *{'; }
# records PREFIX: one console line per record of the queue: "PREFIX 1000001 verified REMOTE".
records() {
    for r in /mnt/data/.upload/*.json; do
        [ -f "$r" ] || continue
        state=$(sed -n 's/.*"state" *: *"\([a-z]*\)".*/\1/p' "$r" | head -1)
        remote=$(sed -n 's/.*"remote" *: *"\([^"]*\)".*/\1/p' "$r" | head -1)
        console "$1 $(basename "$r" .json) ${state:-unreadable} ${remote:--}"
    done
}
# mark WHAT: the VM's clock at a milestone, on the console (stage 1's files die in the cut).
mark() { console "HIL-AT $(now_ms) $*"; }
# forward FILE PREFIX: the service's log lines on the console as they come (the disk loses
# the unsynced end of our logs in the cut; libcamera's "[" lines left out).
forward() {
    tail -f "$1" | while read -r l; do
        case "$l" in "["*) ;; *) console "$2| $l" ;; esac
    done &
}

[ -x /usr/bin/rclone ] || echo "no /usr/bin/rclone in the initramfs (make-initramfs.sh adds the host's)"
step 240 "power-cut-upload stage $HIL_STAGE: shutterd READY"
if [ "$HIL_STAGE" = 1 ]; then
    # Writeback only by a sync: what rclone writes stays in the page cache until the cut.
    echo 360000 > /proc/sys/vm/dirty_expire_centisecs
    echo 360000 > /proc/sys/vm/dirty_writeback_centisecs
    console "HIL-DIRTY expire=$(cat /proc/sys/vm/dirty_expire_centisecs) writeback=$(cat /proc/sys/vm/dirty_writeback_centisecs)"
    mkdir -p "$NAS"
    sync
fi
shutterd_start --no-connector
wait_ready 180 || echo "not READY after 180 s"
mark "shutterd READY"
if [ "$HIL_STAGE" = 1 ]; then
    : > "$HIL_OUT/connector.log"
    forward "$HIL_OUT/shutterd.log" SHUTTERD
    forward "$HIL_OUT/connector.log" CONNECTOR
    sleep 1
    step 260 "power-cut-upload: $PHOTOS_BEFORE photos"
    n=0
    while [ "$n" -lt "$PHOTOS_BEFORE" ]; do
        n=$((n + 1))
        tap_exact
        wait_media_count JPG "$n" 60 || echo "photo $n: no JPEG within 60 s"
        sleep 1
    done
    mark "$PHOTOS_BEFORE photos on the card"
    # The connector from here: the photos go as one batch (each rclone command costs
    # seconds under the emulator; one batch is six of them).
    step 200 "power-cut-upload: $PHOTOS_BEFORE photos verified"
    connector_start
    t=$(now_ms)
    until [ "$(upload_field verifiedFiles)" -ge "$PHOTOS_BEFORE" ] 2>/dev/null; do
        [ "$(now_ms)" -ge "$((t + 180000))" ] && { echo "not $PHOTOS_BEFORE verified within 180 s"; break; }
        sleep 2
    done
    mark "$(upload_field verifiedFiles) verified"
    step 200 "power-cut-upload: $((PHOTOS - PHOTOS_BEFORE)) more photos, a batch under way"
    while [ "$n" -lt "$PHOTOS" ]; do
        n=$((n + 1))
        tap_exact
        wait_media_count JPG "$n" 60 || echo "photo $n: no JPEG within 60 s"
    done
    mark "$n photos on the card"
    t=$(now_ms)
    until batch_under_way || [ "$(upload_field verifiedFiles)" -ge "$PHOTOS" ] 2>/dev/null; do
        [ "$(now_ms)" -ge "$((t + 60000))" ] && { echo "no batch under way within 60 s"; break; }
        usleep 500000
    done
    step 60 "power-cut-upload: waiting for the cut"
    under=no; batch_under_way && under=yes
    records HIL-REC
    ls -ln "$NAS"/*/ 2>/dev/null | awk 'NF >= 9 { print "HIL-NAS " $5 " " $9 }' | while read -r l; do console "$l"; done
    console "HIL-CUT verified=$(upload_field verifiedFiles) waiting=$(upload_field waitingFiles) batch=$under photos=$(media JPG | wc -l) now_ms=$(now_ms) ."
    while :; do console "HIL-T $(now_ms)"; usleep 200000; done
else
    media > "$HIL_OUT/media-before.txt"
    records HIL-REC-BOOT2
    connector_start
    step 300 "power-cut-upload stage 2: the queue settles"
    # Settled: every photo verified and nothing waiting, seen twice 5 s apart.
    photos=$(media JPG | wc -l); t=$(now_ms); seen=0
    while :; do
        v=$(upload_field verifiedFiles); w=$(upload_field waitingFiles)
        if [ "${v:-0}" -ge "$photos" ] && [ "${w:-1}" = 0 ]; then
            seen=$((seen + 1)); [ "$seen" -ge 2 ] && break
            sleep 5; continue
        fi
        seen=0
        [ "$(now_ms)" -ge "$((t + 240000))" ] && { echo "not settled within 240 s: verified ${v:-?} of $photos, waiting ${w:-?}"; break; }
        sleep 2
    done
    console "HIL-SETTLED verified=${v:-?} waiting=${w:-?} photos=$photos after_ms=$(( $(now_ms) - t ))"
    shutterctl upload status > "$HIL_OUT/upload-status.json" 2>&1
    step 60 "power-cut-upload stage 2: stop"
    connector_stop
    shutterd_stop
    records HIL-REC-END
    media > "$HIL_OUT/media.txt"
fi
