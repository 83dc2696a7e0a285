#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# make peer: Shutter side by side with rpicam-apps on Raspberry Pi's libcamera fork, on the
# same virtual camera, in one boot of the emulated-hardware VM, printed as one table.
#   1. the harness's kernel and libcamera 0.7.1 root (deploy/hil, cached),
#   2. the fork + rpicam-apps in overlay layers on that root (build-root.sh, cached),
#   3. the release shutterd built in that root against Debian's 0.7.1 (build-in-root.sh,
#      incremental, the same build make hil's trixie root uses),
#   4. the initramfs: the harness's from the merged root, plus make-initramfs.sh's part,
#   5. one VM boot running vm/peer.sh's steps, then the table (table.sh) from the disk.
# Exit status: 0 when row 5 (Shutter on the fork) passes and every step ran; the figures
# of rows 1-4 are figures, not checks. Root (or password-less sudo) for the roots.
# Environment: PEER_N (photos per variant, 20), PEER_N3 (clip starts per program, 3),
# PEER_STEPS (default all, in order), PEER_BOOT_TIMEOUT (s, 1800), PEER_CACHE.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
out=$repo/.build/peer
mkdir -p "$out"
t0=$(date +%s)
asroot() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }
if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
    echo "peer: FAIL needs root or password-less sudo (overlay mounts, chroot)"; exit 1
fi
phase() { echo "peer: $1 ($(( $(date +%s) - ${2:-$t0} )) s)"; }

sh "$here/install-deps.sh"
s=$(date +%s); KERNEL=$(sh "$repo/deploy/hil/build-kernel.sh"); phase "kernel $KERNEL" "$s"
s=$(date +%s); base=$(asroot env HIL_CACHE="${HIL_CACHE:-}" sh "$repo/deploy/hil/build-trixie-root.sh")
phase "libcamera 0.7.1 root $base" "$s"
s=$(date +%s); lowers=$(asroot env PEER_CACHE="${PEER_CACHE:-}" sh "$here/build-root.sh" "$base")
phase "fork + rpicam-apps layers $(echo "$lowers" | tr ':' '\n' | xargs -n1 dirname | xargs -n1 basename | head -3 | tr '\n' ' ')" "$s"
s=$(date +%s); bindir=$(asroot sh "$repo/deploy/hil/build-in-root.sh" "$base")
phase "release shutterd $base$bindir" "$s"

# The settings the VM reads.
N=${PEER_N:-20}; N3=${PEER_N3:-3}
STEPS=${PEER_STEPS:-row5 row1-shutter-press row1-shutter-focused row1-rpicam-viewfinder row1-rpicam-zsl row1-rpicam-immediate row2-shutter-term row2-shutter-kill row2-rpicam-term row2-rpicam-kill row2-rpicam-int row3-shutter row3-rpicam-mp4 row3-rpicam-h264 row4-shutter row4-rpicam}
cat > "$out/peer.env" <<ENV
PEER_N=$N
PEER_N3=$N3
PEER_STEPS="$STEPS"
PEER_LDPATH=/opt/rpi-libcamera/lib/x86_64-linux-gnu:/opt/rpicam-apps/lib/x86_64-linux-gnu
PEER_STEP_TIMEOUT_row5=400
PEER_STEP_TIMEOUT_row1_shutter_press=$((120 + N * 30))
PEER_STEP_TIMEOUT_row1_shutter_focused=$((120 + N * 30))
PEER_STEP_TIMEOUT_row1_rpicam_viewfinder=$((120 + N * 30))
PEER_STEP_TIMEOUT_row1_rpicam_zsl=$((120 + N * 30))
PEER_STEP_TIMEOUT_row1_rpicam_immediate=$((120 + N * 40))
PEER_STEP_TIMEOUT_row3_shutter=$((120 + N3 * 120))
PEER_STEP_TIMEOUT_row3_rpicam_h264=$((120 + N3 * 120))
PEER_STEP_TIMEOUT_row4_shutter=1200
PEER_STEP_TIMEOUT_row4_rpicam=1200
ENV

# The initramfs: cached by what goes into it (layers, the shutterd binary, scripts, settings).
key=$( { echo "$lowers"; sha256sum "$base$bindir/shutterd" "$base$bindir/shutterctl";
         cat "$here"/vm/*.sh "$here/peer-clock.c" "$here/make-initramfs.sh" "$out/peer.env" \
             "$repo"/deploy/hil/make-initramfs.sh "$repo"/deploy/hil/init "$repo"/deploy/hil/vm/*.sh "$repo"/deploy/hil/hil-pull.c;
         ls -R "$repo/boards"; cat "$repo"/boards/*; } | sha256sum | cut -c1-16)
INITRD=$out/initrd-$key.cpio
s=$(date +%s)
if [ -f "$INITRD" ]; then
    echo "peer: reusing $INITRD"
else
    rm -f "$out"/initrd-*.cpio
    # A read-only overlay of the three layers (no upper: nothing is written), private mounts.
    asroot unshare --mount --propagation private sh -eu -s "$lowers" "$bindir" "$out" "$here" "$repo" "$INITRD" <<'INNER'
lowers=$1; bindir=$2; out=$3; here=$4; repo=$5; initrd=$6
m=$(mktemp -d /tmp/shutter-peer-merged.XXXXXX)
mount -t overlay overlay -o "lowerdir=$lowers" "$m"
SYSROOT=$m sh "$repo/deploy/hil/make-initramfs.sh" "$out/base.cpio" "$bindir"
sh "$here/make-initramfs.sh" "$m" "$out/extra.cpio" "$out/peer.env"
cat "$out/base.cpio" "$out/extra.cpio" > "$initrd.tmp"
mv "$initrd.tmp" "$initrd"
rm -f "$out/base.cpio" "$out/extra.cpio"
umount "$m"; rmdir "$m"
INNER
    [ "$(id -u)" -eq 0 ] || asroot chown "$(id -u):$(id -g)" "$INITRD"
fi
phase "initramfs $INITRD ($(du -k "$INITRD" | cut -f1) KiB)" "$s"

# One boot. The data disk is sparse: two 60 s clips at 10 Mbit/s and 100 4608x2592 JPEGs fit.
vm=$out/vm
rm -rf "$vm"; mkdir -p "$vm"
truncate -s 4G "$vm/disk.img"
mkfs.ext4 -q -F -L shutter "$vm/disk.img"
log=$vm/serial.log
limit=${PEER_BOOT_TIMEOUT:-1800}
s=$(date +%s)
qemu-system-x86_64 -accel tcg -m 2048 -smp 2 -nographic -no-reboot \
    -kernel "$KERNEL" -initrd "$INITRD" \
    -append "console=ttyS0 quiet panic=-1 hil.scenario=peer hil.stage=1 hil.virtual=1" \
    -drive "file=$vm/disk.img,format=raw,if=virtio" < /dev/null > "$log" 2>&1 &
qpid=$!
timedout=""
while kill -0 "$qpid" 2>/dev/null; do
    if [ $(( $(date +%s) - s )) -ge "$limit" ]; then
        last=$(grep 'PEER: step .* start' "$log" | tail -1 | sed 's/.*PEER: step \([^ ]*\).*/\1/')
        timedout="the VM boot hit its bound of $limit s during step ${last:-?(before the first step)}"
        kill -9 "$qpid" 2>/dev/null
        break
    fi
    sleep 1
done
wait "$qpid" 2>/dev/null || true
phase "VM boot done" "$s"
grep '^PEER: ' "$log" | sed 's/^/  vm: /' | tr -d '\r'
rm -rf "$vm/disk"; mkdir -p "$vm/disk"
e2fsck -fn "$vm/disk.img" > "$vm/fsck.log" 2>&1 || true
debugfs -R "rdump / $vm/disk" "$vm/disk.img" > "$vm/debugfs.log" 2>&1
rc=0
sh "$here/table.sh" "$vm/disk" "$repo" || rc=$?
[ -z "$timedout" ] || { echo "peer: FAIL $timedout (console: $log)"; rc=1; }
grep -q 'HIL: done' "$log" || [ -n "$timedout" ] || { echo "peer: FAIL the VM did not finish (console: $log)"; rc=1; }
[ "$rc" = 0 ] && rm -f "$vm/disk.img"
phase "make peer: $( [ "$rc" = 0 ] && echo passed || echo FAILED ), total"
exit "$rc"
