#!/bin/sh
# Emulated-hardware harness: builds (or reuses) the VM kernel, builds the release shutterd,
# assembles the initramfs and runs each scenario (deploy/hil/scenarios/NAME.sh) in QEMU.
# Prints one PASS/FAIL line per scenario with its reason, then "N passed, N failed".
# Usage: run.sh [SCENARIO...]   (default: probe, then every other scenario)
#   HIL_NO_SHUTTERD=1  build the initramfs without shutterd (environment probe only)
#   HIL_BREAK=NAME     break one thing on purpose to see the checks fail: polarity,
#                      no-debounce, no-audio, no-flash, no-status-led (vm/lib.sh)
#   HIL_REUSE=1        reuse .build/hil/initrd.cpio.gz as it is (no rebuild of anything)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
sh "$here/install-deps.sh"
hil=$repo/.build/hil
mkdir -p "$hil"

t0=$(date +%s)
KERNEL=$(sh "$here/build-kernel.sh")
echo "hil: kernel $KERNEL ($(( $(date +%s) - t0 )) s)"
bindir=""
INITRD=$hil/initrd.cpio
if [ -n "${HIL_REUSE:-}" ] && [ -f "$INITRD" ]; then
    echo "hil: reusing $INITRD"
elif [ -z "${HIL_NO_SHUTTERD:-}" ]; then
    t1=$(date +%s)
    swift build -c release --product shutterd >&2
    swift build -c release --product shutterctl >&2
    bindir=$(swift build -c release --show-bin-path)
    echo "hil: release shutterd built ($(( $(date +%s) - t1 )) s)"
fi
[ -n "${HIL_REUSE:-}" ] && [ -f "$INITRD" ] || sh "$here/make-initramfs.sh" "$INITRD" $bindir
export KERNEL INITRD

if [ $# -eq 0 ]; then
    # probe first: when it fails the VM itself is broken, not the service.
    set -- probe $(cd "$here/scenarios" && ls *.sh | sed 's/\.sh$//' | grep -v "^probe$")
fi
passed=0; failed=0
for SCENARIO in "$@"; do
    OUT=$hil/$SCENARIO${HIL_BREAK:+-broken-$HIL_BREAK}
    rm -rf "$OUT"; mkdir -p "$OUT"
    export SCENARIO OUT
    s0=$(date +%s)
    # Each scenario in its own shell: its functions and variables do not leak into the next.
    # A VM stage that times out fails the scenario whatever the files say.
    if reason=$(set +eu; . "$here/host-lib.sh"; . "$here/scenarios/$SCENARIO.sh"
                if scenario_run > "$OUT/run.log" 2>&1; then scenario_check
                else echo "a VM stage failed or timed out (see $OUT/serial-*.log): $(scenario_check)"; exit 1; fi); then
        echo "PASS $SCENARIO ($(( $(date +%s) - s0 )) s): $reason"
        passed=$((passed + 1))
        rm -f "$OUT/disk.img"
    else
        echo "FAIL $SCENARIO ($(( $(date +%s) - s0 )) s): $reason"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
