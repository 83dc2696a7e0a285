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
hil_boot() {
    stage=$1; marker=${2:-}; delay=${3:-0}
    log="$OUT/serial-$stage.log"
    : > "$log"
    qemu-system-x86_64 -accel tcg -m 1536 -smp 2 -nographic -no-reboot \
        -kernel "$KERNEL" -initrd "$INITRD" \
        -append "console=ttyS0 quiet panic=-1 hil.scenario=$SCENARIO hil.stage=$stage" \
        -drive "file=$OUT/disk.img,format=raw,if=virtio" \
        < /dev/null > "$log" 2>&1 &
    qpid=$!
    start=$(date +%s)
    killed=0
    while kill -0 "$qpid" 2>/dev/null; do
        if [ $(( $(date +%s) - start )) -ge "${HIL_BOOT_TIMEOUT:-300}" ]; then
            echo "hil_boot: stage $stage timed out after ${HIL_BOOT_TIMEOUT:-300} s" >> "$log"
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
