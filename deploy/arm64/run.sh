#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# `make arm64`: the package on the Pi's architecture, under qemu-user. In a cached Debian
# trixie arm64 root (build-root.sh: trixie's swiftlang 6.0.3, libcamera, libgpiod 2,
# FFmpeg 7) it builds the release shutterd and shutterctl, builds the tests and runs the
# ShutterCore and ShutterMedia unit tests, prints the executables' segments (readelf -lW)
# and runs deploy/check-segments.sh on every arm64 executable. The working tree is
# bound read-only at /src; the build goes to /build inside the cached root, so the host's
# .build is untouched and a second run is incremental. Root only (debootstrap, chroot,
# mounts); everything runs in a private mount namespace, so nothing stays mounted.
# Cold (no root yet): ~70 min on 2 shared cores; warm: ~10 min (docs/emulated-hardware.md: On arm64).
# ARM64_STEPS (default "release tests") limits the steps, e.g. ARM64_STEPS=release;
# "deb" builds the arm64 package there (deploy/deb/build.sh, `make arm64-deb`) and copies
# it to .build/ (its path in .build/deb-path-arm64). Each step runs under a timeout about
# twice its cold time, so a qemu-user deadlock (one sat 21 min) fails naming the command.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || exec sudo ARM64_STEPS="${ARM64_STEPS:-}" ARM64_CACHE="${ARM64_CACHE:-}" sh "$0" "$@"
# The version and the package's timestamp come from the host's git (the root has none, /src
# is read-only): `make` stamped the version before this runs.
version=$(sh "$here/deploy/version.sh")
epoch=$(sh "$here/deploy/deb/source-date-epoch.sh")
steps=${ARM64_STEPS:-release tests}
t0=$(date +%s)
sh "$here/deploy/arm64/install-deps.sh"

sh "$here/deploy/arm64/binfmt.sh"

root=$(sh "$here/deploy/arm64/build-root.sh")
t_root=$(date +%s)
mkdir -p "$root/src" "$root/build/logs"
logs="$root/build/logs"
echo "arm64: root $root"

# The steps inside the root, in a private mount namespace (all mounts vanish with it).
# Times go to $logs/times as "step seconds".
: > "$logs/times"
# The man pages, rendered here (the root has no scdoc) with the same timestamp.
case " $steps " in *" deb "*)
    rm -rf "$root/build/man"
    SOURCE_DATE_EPOCH=$epoch sh "$here/deploy/deb/man.sh" "$root/build/man"
esac
unshare --mount --propagation private sh -eu -s "$root" "$here" "$steps" "$version" "$epoch" <<'INNER'
root=$1; here=$2; steps=$3; version=$4; epoch=$5
mount --bind /proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind "$here" "$root/src"
mount -o remount,bind,ro "$root/src"
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
SW="swift build --package-path /src --scratch-path /build"
logs="$root/build/logs"
echo "arm64: $(chroot "$root" $E swift --version 2>&1 | head -n1)"
step() { # step NAME LOG SECONDS COMMAND: runs COMMAND in the root under a SECONDS bound,
          # its output in LOG, and times it
    name=$1; log=$2; secs=$3; shift 3
    s=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    timeout --kill-after=30 "$secs" nice -n 15 chroot "$root" $E bash -c "$*" > "$logs/$log" 2>&1 || rc=$?
    echo "$name $(( $(date +%s) - s ))" >> "$logs/times"
    tail -n 3 "$logs/$log" | sed "s/^/arm64: [$name] /"
    grep -E 'warning: .*(RWX|LOAD segment)' "$logs/$log" | sort -u | sed "s/^/arm64: [$name] linker: /" || true
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "arm64: FAIL $name TIMEOUT after $secs s (hung?): $* (log $logs/$log)" >&2; exit 1
    fi
    [ "$rc" = 0 ] || { echo "arm64: FAIL $name (exit $rc, log $logs/$log)" >&2; exit 1; }
}
case " $steps " in *" release "*)
    step release release.log 7200 "$SW -c release --product shutterd && $SW -c release --product shutterctl"
esac
case " $steps " in *" tests "*)
    step build-tests build-tests.log 7200 "$SW --build-tests"
    step unit-tests unit-tests.log 3600 "cd /src && swift test --package-path /src --scratch-path /build --skip-build \
        --disable-swift-testing --filter '^(ShutterCoreTests|ShutterMediaTests)\.'"
esac
case " $steps " in *" deb "*)
    rm -f "$root"/build/shutter_*.deb
    step deb deb.log 7200 "SHUTTER_VERSION='$version' SOURCE_DATE_EPOCH='$epoch' DEB_MAN=/build/man \
        DEB_SCRATCH=/build/deb DEB_OUT=/build sh /src/deploy/deb/build.sh"
esac
INNER
case " $steps " in *" deb "*)
    deb=$(ls "$root"/build/shutter_*_arm64.deb)
    mkdir -p "$here/.build"
    cp "$deb" "$here/.build/"
    echo "$here/.build/$(basename "$deb")" > "$here/.build/deb-path-arm64"
    echo "arm64: package $here/.build/$(basename "$deb")"
esac

echo "arm64: segments of the release executables (readelf -lW, aarch64):"
for exe in shutterd shutterctl; do
    f="$root/build/release/$exe"
    [ -f "$f" ] || f="$root/build/deb/release/$exe"
    [ -f "$f" ] || continue
    echo "  $exe ($(stat -c %s "$f") bytes):"
    LC_ALL=C readelf -lW "$f" | awk '/^  (LOAD|GNU_STACK|GNU_RELRO) /' | sed 's/^/  /'
done
targets=""
for d in "$root/build/release" "$root/build/debug" "$root/build/deb/release"; do
    [ -d "$d" ] && targets="$targets $d"
done
rc=0
# shellcheck disable=SC2086
sh "$here/deploy/check-segments.sh" -v $targets || rc=$?
t_end=$(date +%s)
printf 'arm64: times: deps+root %s s, %s, total %s s\n' "$(( t_root - t0 ))" \
    "$(awk '{printf "%s%s %s s", s, $1, $2; s = ", "}' "$logs/times")" "$(( t_end - t0 ))"
[ "$rc" = 0 ] || { echo "arm64: FAIL an arm64 executable has a writable and executable segment" >&2; exit 1; }
echo "arm64: ok"
