#!/bin/sh
# Emulated-hardware harness: builds (or reuses) the VM kernel, builds the release shutterd,
# assembles the initramfs and runs each scenario (deploy/hil/scenarios/NAME.sh) in QEMU,
# once per root: `bookworm` (this machine: libcamera 0.0.3, libgpiod 1.6) and `trixie` (the
# cached Debian trixie root of build-trixie-root.sh: libcamera 0.7.1 with its virtual
# cameras, libgpiod 2, Swift 6.0.3; shutterd built there by build-in-root.sh).
# Prints one PASS/FAIL line per scenario with its reason, then "N passed, N failed".
# Usage: run.sh [SCENARIO...]   (default: probe, then every other scenario)
#   HIL_ROOTS="bookworm trixie"  the roots to boot (default both; trixie needs root)
#   HIL_NO_SHUTTERD=1  build the initramfs without shutterd (environment probe only)
#   HIL_BREAK=NAME     break one thing on purpose to see the checks fail: polarity,
#                      no-debounce, no-audio, no-flash, no-status-led (vm/lib.sh)
#   HIL_REUSE=1        reuse each root's initrd.cpio as it is (no rebuild of anything)
# A scenario file with a "# roots: trixie" line runs on that root only (the virtual cameras).
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
export KERNEL

# asroot COMMAND...: the trixie root's steps need root (debootstrap, chroot, mounts): as
# root, else through sudo without a password prompt.
asroot() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }
passed=0; failed=0
for ROOT_NAME in ${HIL_ROOTS:-bookworm trixie}; do
    r0=$(date +%s)
    bindir=""; sysroot=""
    case $ROOT_NAME in
    bookworm) out_root=$hil ;;
    trixie)
        out_root=$hil/trixie
        if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
            echo "FAIL trixie: the libcamera 0.7.1 root needs root or password-less sudo (debootstrap, chroot); or HIL_ROOTS=bookworm"
            failed=$((failed + 1)); continue
        fi
        t1=$(date +%s)
        sysroot=$(asroot env HIL_CACHE="${HIL_CACHE:-}" sh "$here/build-trixie-root.sh") \
            || { echo "FAIL trixie: building the root"; failed=$((failed + 1)); continue; }
        echo "hil: trixie root $sysroot ($(( $(date +%s) - t1 )) s)"
        ;;
    *) echo "hil: unknown root '$ROOT_NAME' (bookworm, trixie)" >&2; exit 2 ;;
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
                    || { echo "FAIL trixie: release build in $sysroot"; failed=$((failed + 1)); continue; }
            else
                swift build -c release --product shutterd >&2
                swift build -c release --product shutterctl >&2
                bindir=$(swift build -c release --show-bin-path)
            fi
            echo "hil: $ROOT_NAME: release shutterd built ($(( $(date +%s) - t1 )) s)"
        fi
        if [ -n "$sysroot" ]; then
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
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
