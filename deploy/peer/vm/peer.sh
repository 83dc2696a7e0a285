# SPDX-License-Identifier: BSD-2-Clause
# make peer, in the VM (hil.scenario=peer hil.virtual=1): Shutter and rpicam-apps in turn
# on the same virtual camera (libcamera's virtual pipeline, Virtual0: 1920x1080 and
# 4608x2592), both on Raspberry Pi's libcamera fork (/opt/rpi-libcamera, in place of Debian's
# 0.7.1 for shutterd: LD_LIBRARY_PATH + LD_BIND_NOW=1). Each step runs in its own shell under
# a bound (PEER_STEP_TIMEOUT_<step> overrides, from peer.env) and writes into
# $HIL_OUT/<step>/; the host reads those files and prints the table (deploy/peer/table.sh).
# The console gets "PEER: step NAME start|end rc=N s=S" so a hung boot names its step.
. /hil/lib.sh
. /hil/peer.env
base=$HIL_OUT
export PEER_BASE=$base
mkdir -p "$base"

console_step() { echo "PEER: $*" > /dev/console; echo "$(now_ms) $*" >> "$base/steps.log"; }

# What the VM is, before any step.
{
    echo "kernel $(uname -r)"
    echo "cpus $(grep -c ^processor /proc/cpuinfo)"
    grep MemTotal /proc/meminfo
    ls -l /dev/dma_heap/ /dev/udmabuf 2>&1
} > "$base/vm.txt" 2>&1

# The fork's data: the two virtual cameras the harness's init put in Debian's place.
mkdir -p /opt/rpi-libcamera/share/libcamera/pipeline/virtual
cp /hil/virtual.yaml /opt/rpi-libcamera/share/libcamera/pipeline/virtual/virtual.yaml

# rpicam-apps allocates its buffers from /dev/dma_heap/vidbuf_cached (on a Pi 5 a link to
# the system heap) or linux,cma: the VM has the system heap only.
[ -e /dev/dma_heap/vidbuf_cached ] || ln -s system /dev/dma_heap/vidbuf_cached

# rpicam-apps refuses to run beside any V4L2 device it does not know (vimc here): its
# platform check walks /dev/video*. Kept as a fact, then vimc is unbound so both programs
# see the virtual cameras alone (Virtual0 is then camera 0 for both).
(
    export LD_LIBRARY_PATH=$PEER_LDPATH LD_BIND_NOW=1
    timeout -s KILL 120 rpicam-still --list-cameras
) > "$base/list-cameras-vimc.txt" 2>&1
echo "rc=$?" >> "$base/list-cameras-vimc.txt"
echo vimc.0 > /sys/bus/platform/drivers/vimc/unbind 2>/dev/null
udevadm settle --timeout=10
ls /dev/video* > "$base/video-devices-after-unbind.txt" 2>&1
# The cameras as rpicam-apps lists them (its order: by id, descending): Virtual0's index.
(
    export LD_LIBRARY_PATH=$PEER_LDPATH LD_BIND_NOW=1
    timeout -s KILL 300 rpicam-still --list-cameras
) > "$base/list-cameras.txt" 2>&1
echo "rc=$?" >> "$base/list-cameras.txt"
sed -n 's/^ *\([0-9]\) : imx708-virtual .*/\1/p' "$base/list-cameras.txt" | head -1 > /tmp/peer-rpicam-camera
[ -s /tmp/peer-rpicam-camera ] || echo 0 > /tmp/peer-rpicam-camera

# The loopback "microphone": the tone plays into it for the whole boot (the clips' audio).
(while :; do aplay -q -D hw:Loopback,0,0 /hil/tone.wav 2>> "$base/aplay.log" || sleep 1; done) &
TONE_LOOP=$!

for step in $PEER_STEPS; do
    eval "secs=\${PEER_STEP_TIMEOUT_$(echo "$step" | tr '-' '_'):-600}"
    mkdir -p "$base/$step"
    console_step "step $step start (bound $secs s)"
    s0=$(now_ms)
    timeout -s KILL "$secs" sh /hil/peer-step.sh "$step" > "$base/$step/step.log" 2>&1
    rc=$?
    s=$(( ($(now_ms) - s0) / 1000 ))
    if [ "$rc" = 137 ]; then
        console_step "TIMEOUT step $step after $secs s"
        echo "TIMEOUT after $secs s" > "$base/$step/timeout"
    fi
    console_step "step $step end rc=$rc s=$s"
    # Whatever a step started and left running (a hung program) goes with it.
    if [ -f "/tmp/peer-pids-$step" ]; then
        for p in $(cat "/tmp/peer-pids-$step"); do kill -9 "$p" 2>/dev/null; done
    fi
    sync
done
kill "$TONE_LOOP" 2>/dev/null
console_step "all steps done"
