#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Emulated-hardware harness: builds (or reuses) the VM kernel, builds the release shutterd,
# assembles the initramfs and runs each scenario (deploy/hil/scenarios/NAME.sh) in QEMU,
# once per root: `bookworm` (this machine: libcamera 0.0.3, libgpiod 1.6) and `trixie` (the
# cached Debian trixie root of build-trixie-root.sh: libcamera 0.7.1 with its virtual
# cameras, libgpiod 2, Swift 6.0.3; shutterd built there by build-in-root.sh). A third root,
# `arm64` (make hil-arm64, not in make hil), is make arm64's trixie arm64 root with an overlay
# layer of the VM's tools (build-arm64-root.sh), shutterd built in it under qemu-user, booted
# on an arm64 kernel in qemu-system-aarch64 -M virt -cpu cortex-a72.
# Prints one PASS/FAIL line per scenario with its reason, then "N passed, N failed".
# Usage: run.sh [SCENARIO...]   (default: probe, then every other scenario)
#   HIL_ROOTS="bookworm trixie"  the roots to boot (default both; trixie and arm64 need root)
#   HIL_NO_SHUTTERD=1  build the initramfs without shutterd (environment probe only)
#   HIL_BREAK=NAME     break one thing on purpose to see the checks fail: polarity,
#                      no-debounce, no-audio, no-flash, no-status-led, stall (a step
#                      hangs: the host kills the VM naming it) (vm/lib.sh)
#   HIL_REUSE=1        reuse each root's initrd.cpio as it is (no rebuild of anything)
# A scenario file with a "# roots: trixie" line runs on that root only (the virtual cameras).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
sh "$here/install-deps.sh"
hil=$repo/.build/hil
mkdir -p "$hil"

case " ${HIL_ROOTS:-} " in *" arm64 "*) sh "$here/install-deps.sh" arm64 ;; esac

# asroot COMMAND...: the trixie root's steps need root (debootstrap, chroot, mounts): as
# root, else through sudo without a password prompt.
asroot() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }
passed=0; failed=0; start_all=$(date +%s)
for ROOT_NAME in ${HIL_ROOTS:-bookworm trixie}; do
    r0=$(date +%s)
    bindir=""; sysroot=""; lowers=""
    HIL_ARCH=x86_64; [ "$ROOT_NAME" = arm64 ] && HIL_ARCH=arm64
    export HIL_ARCH
    t0=$(date +%s)
    KERNEL=$(sh "$here/build-kernel.sh" "$HIL_ARCH") || { echo "FAIL $ROOT_NAME: building the $HIL_ARCH kernel"; failed=$((failed + 1)); continue; }
    echo "hil: kernel $KERNEL ($(( $(date +%s) - t0 )) s)"
    export KERNEL
    if [ "$ROOT_NAME" != bookworm ] && [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
        echo "FAIL $ROOT_NAME: this root needs root or password-less sudo (debootstrap, chroot, mounts); or HIL_ROOTS=bookworm"
        failed=$((failed + 1)); continue
    fi
    case $ROOT_NAME in
    bookworm) out_root=$hil ;;
    trixie)
        out_root=$hil/trixie
        t1=$(date +%s)
        sysroot=$(asroot env HIL_CACHE="${HIL_CACHE:-}" sh "$here/build-trixie-root.sh") \
            || { echo "FAIL trixie: building the root"; failed=$((failed + 1)); continue; }
        echo "hil: trixie root $sysroot ($(( $(date +%s) - t1 )) s)"
        ;;
    arm64)
        out_root=$hil/arm64
        t1=$(date +%s)
        # The base (make arm64's root) is where shutterd is built; the VM's files come from
        # the base with the tools layer on top, mounted read-only for make-initramfs.
        lowers=$(asroot env HIL_CACHE="${HIL_CACHE:-}" sh "$here/build-arm64-root.sh") \
            || { echo "FAIL arm64: building the root"; failed=$((failed + 1)); continue; }
        sysroot=${lowers##*:}
        echo "hil: arm64 root $lowers ($(( $(date +%s) - t1 )) s)"
        ;;
    *) echo "hil: unknown root '$ROOT_NAME' (bookworm, trixie, arm64)" >&2; exit 2 ;;
    esac
    mkdir -p "$out_root"
    INITRD=$out_root/initrd.cpio
    if [ -n "${HIL_REUSE:-}" ] && [ -f "$INITRD" ]; then
        echo "hil: reusing $INITRD"
    else
        if [ -z "${HIL_NO_SHUTTERD:-}" ]; then
            t1=$(date +%s)
            if [ -n "$sysroot" ]; then
                bindir=$(asroot sh "$here/build-in-root.sh" "$sysroot") \
                    || { echo "FAIL $ROOT_NAME: release build in $sysroot"; failed=$((failed + 1)); continue; }
            else
                swift build -c release --product shutterd >&2
                swift build -c release --product shutterctl >&2
                bindir=$(swift build -c release --show-bin-path)
            fi
            echo "hil: $ROOT_NAME: release shutterd built ($(( $(date +%s) - t1 )) s)"
        fi
        if [ -n "$lowers" ]; then
            asroot unshare --mount --propagation private sh -eu -s "$lowers" "$here" "$INITRD" $bindir <<'INNER'
lowers=$1; here=$2; initrd=$3; shift 3
m=$(mktemp -d /tmp/shutter-hil-arm64.XXXXXX)
mount -t overlay overlay -o "lowerdir=$lowers" "$m"
rc=0; SYSROOT=$m sh "$here/make-initramfs.sh" "$initrd" "$@" || rc=$?
umount "$m"; rmdir "$m"
exit "$rc"
INNER
        elif [ -n "$sysroot" ]; then
            asroot env SYSROOT="$sysroot" sh "$here/make-initramfs.sh" "$INITRD" $bindir
        else
            sh "$here/make-initramfs.sh" "$INITRD" $bindir
        fi
    fi
    export INITRD ROOT_NAME

    names=$*
    if [ -z "$names" ]; then
        # probe first: when it fails the VM itself is broken, not the service.
        names="probe $(cd "$here/scenarios" && ls *.sh | sed 's/\.sh$//' | grep -v "^probe$" | tr '\n' ' ')"
    fi
    for SCENARIO in $names; do
        # Scenarios for one root only ("# roots: trixie"): skipped on the others.
        roots=$(sed -n 's/^# roots: *//p' "$here/scenarios/$SCENARIO.sh" 2>/dev/null)
        if [ -n "$roots" ]; then
            case " $roots " in *" $ROOT_NAME "*) ;; *) continue ;; esac
        fi
        label=$SCENARIO; [ "$ROOT_NAME" = bookworm ] || label="$ROOT_NAME/$SCENARIO"
        OUT=$out_root/$SCENARIO${HIL_BREAK:+-broken-$HIL_BREAK}
        rm -rf "$OUT"; mkdir -p "$OUT"
        export SCENARIO OUT
        s0=$(date +%s)
        # Each scenario in its own shell: its functions and variables do not leak into the next.
        # A VM stage that times out fails the scenario whatever the files say.
        if reason=$(set +eu; . "$here/host-lib.sh"; . "$here/scenarios/$SCENARIO.sh"
                    if scenario_run > "$OUT/run.log" 2>&1; then scenario_check
                    elif [ -f "$OUT/hung" ]; then echo "$(cat "$OUT/hung") (see $OUT/serial-*.log): $(scenario_check)"; exit 1
                    else echo "a VM stage failed or timed out (see $OUT/serial-*.log): $(scenario_check)"; exit 1; fi); then
            echo "PASS $label ($(( $(date +%s) - s0 )) s): $reason"
            passed=$((passed + 1))
            rm -f "$OUT/disk.img"
        else
            echo "FAIL $label ($(( $(date +%s) - s0 )) s): $reason"
            failed=$((failed + 1))
        fi
    done
    echo "hil: $ROOT_NAME: $(( $(date +%s) - r0 )) s"
done
echo "$passed passed, $failed failed ($(( $(date +%s) - start_all )) s in all)"
[ "$failed" -eq 0 ]
