#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds (or reuses) the side-by-side root of `make peer` and prints its overlay lowerdir
# string (top layer first, the base last): overlays on the emulated-hardware harness's
# libcamera 0.7.1 root (deploy/hil/build-trixie-root.sh, left untouched underneath):
#   pkgs-<hash>/    + the packages the fork and rpicam-apps build with (trixie)
#   fork-<hash>/    + Raspberry Pi's libcamera fork at a pinned tag, in /opt/rpi-libcamera
#                   (soname libcamera.so.0.7, like Debian's 0.7.1 in /usr); its version
#                   string is the tag's (.tarball-version, as a release tarball has it)
#   rpicam-<hash>/  + rpicam-apps at a pinned tag built against the fork, with
#                   rpicam-apps-virtual.patch, in /opt/rpicam-apps
# Each layer is an overlayfs upper directory under $PEER_CACHE (default
# /var/cache/shutter-peer); <hash> covers what it is built from (the layer below, packages,
# tag and commit, meson options, patch, RECIPE), so a warm run rebuilds nothing. Mounts live
# in a private mount namespace only. Every step runs under a bound that names it. Root only.
# Usage: build-root.sh BASE_ROOT
# Sources: PEER_LIBCAMERA_GIT / PEER_RPICAM_GIT, a git directory holding the tags (default
# the fetched mirrors under /work/.mirror), else the GitHub URL (cloned bare into the cache).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
base=${1:?BASE_ROOT (deploy/hil/build-trixie-root.sh)}
cache=${PEER_CACHE:-/var/cache/shutter-peer}
RECIPE=1
LC_TAG=v0.7.1+rpt20260429
LC_COMMIT=26bfadc66e8d7f727a993fe58174217b8a96f7f9
RPICAM_TAG=v1.13.0
RPICAM_COMMIT=6fcb0a3810715d05f01e06acb5f8e18e7d3a29cd
# The fork's build (issue 24), its runtime in the VM needs nothing more than the root has.
PKGS="meson ninja-build g++ pkg-config python3-jinja2 python3-yaml python3-ply libyaml-dev
libgnutls28-dev libssl-dev libudev-dev libyuv-dev libpisp-dev libevent-dev
libboost-program-options-dev libdrm-dev libexif-dev libjpeg-dev libtiff-dev libpng-dev
libavcodec-dev libavdevice-dev libavformat-dev libavutil-dev libswresample-dev
inotify-tools time"
LC_OPTS="--buildtype=release --prefix=/opt/rpi-libcamera -Dpipelines=virtual,vimc,rpi/vc4,rpi/pisp
-Dipas=vimc,rpi/vc4,rpi/pisp -Dcam=disabled -Dqcam=disabled -Dgstreamer=disabled -Dv4l2=false
-Dpycamera=disabled -Ddocumentation=disabled -Dtest=false -Dlc-compliance=disabled
-Drpi-awb-nn=disabled -Dtracing=disabled -Dsoftisp-gpu=disabled"
RPICAM_OPTS="--buildtype=release --prefix=/opt/rpicam-apps -Denable_drm=disabled -Denable_egl=disabled
-Denable_qt=disabled -Denable_wayland=disabled -Denable_libav=enabled -Denable_opencv=disabled
-Denable_tflite=disabled -Denable_hailo=disabled"
PATCH=$here/rpicam-apps-virtual.patch

[ -d "$base/usr" ] || { echo "peer: FAIL no base root at $base" >&2; exit 1; }
hashP=$(printf 'recipe %s\nbase %s\n%s\n' "$RECIPE" "$(basename "$base")" "$PKGS" | sha256sum | cut -c1-16)
hashA=$(printf 'P %s\n%s %s\n%s\n' "$hashP" "$LC_TAG" "$LC_COMMIT" "$LC_OPTS" | sha256sum | cut -c1-16)
hashB=$(printf 'A %s\n%s %s\n%s\n' "$hashA" "$RPICAM_TAG" "$RPICAM_COMMIT" "$RPICAM_OPTS" |
    cat - "$PATCH" | sha256sum | cut -c1-16)
P=$cache/pkgs-$hashP
A=$cache/fork-$hashA
B=$cache/rpicam-$hashB
lowers="$B/upper:$A/upper:$P/upper:$base"
done_all() { [ -f "$P/.complete" ] && [ -f "$A/.complete" ] && [ -f "$B/.complete" ]; }
if done_all; then echo "$lowers"; exit 0; fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if done_all; then echo "$lowers"; exit 0; fi

# git_dir NAME DEFAULT URL TAG COMMIT: a git directory holding TAG at COMMIT (the pin).
git_dir() {
    d=${2}
    if ! [ -d "$d" ]; then
        d=$cache/git/$1.git
        [ -d "$d" ] || timeout 1200 git clone -q --bare "$3" "$d" >&2 || {
            echo "peer: FAIL cloning $3 (set PEER_*_GIT to a local copy)" >&2; exit 1; }
    fi
    got=$(git --git-dir="$d" rev-parse "$4^{commit}" 2>/dev/null) || {
        echo "peer: FAIL $d has no tag $4" >&2; exit 1; }
    [ "$got" = "$5" ] || { echo "peer: FAIL $1 tag $4 is $got, pinned $5" >&2; exit 1; }
    echo "$d"
}
lcgit=$(git_dir libcamera "${PEER_LIBCAMERA_GIT:-/work/.mirror/raspberrypi+libcamera/repo}" \
    https://github.com/raspberrypi/libcamera.git "$LC_TAG" "$LC_COMMIT")
rpgit=$(git_dir rpicam-apps "${PEER_RPICAM_GIT:-/work/.mirror/raspberrypi+rpicam-apps/repo}" \
    https://github.com/raspberrypi/rpicam-apps.git "$RPICAM_TAG" "$RPICAM_COMMIT")

# The layers (deploy/overlay-layer.sh): STEPS below run with $m = the merged root, mounts
# private, and these variables.
# shellcheck source=../overlay-layer.sh
. "$here/../overlay-layer.sh"
export lcgit rpgit patch="$PATCH" pkgs="$PKGS" lctag="$LC_TAG" lcopts="$LC_OPTS" rptag="$RPICAM_TAG" rpopts="$RPICAM_OPTS"
layer() { overlay_layer peer "$@"; }

layer "$P" "$base" '
cp /etc/resolv.conf "$m/etc/resolv.conf"
bounded 600 "apt-get update" nice -n 10 chroot "$m" $E apt-get update -q
bounded 1800 "apt-get install (the fork and rpicam-apps build packages)" nice -n 10 chroot "$m" $E \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $pkgs
in_root apt-get clean
'
layer "$A" "$P/upper:$base" '
mkdir -p "$m/build/peer/libcamera-src"
git --git-dir="$lcgit" archive "$lctag" | tar -x -C "$m/build/peer/libcamera-src"
echo "${lctag#v}" > "$m/build/peer/libcamera-src/.tarball-version"
bounded 600 "meson setup (libcamera fork $lctag)" nice -n 10 chroot "$m" $E \
    meson setup /build/peer/libcamera-build /build/peer/libcamera-src $lcopts
bounded 3600 "ninja (libcamera fork $lctag)" nice -n 10 chroot "$m" $E ninja -C /build/peer/libcamera-build install
test -e "$m/opt/rpi-libcamera/lib/x86_64-linux-gnu/libcamera.so.0.7"
'
layer "$B" "$A/upper:$P/upper:$base" '
mkdir -p "$m/build/peer/rpicam-src"
git --git-dir="$rpgit" archive "$rptag" | tar -x -C "$m/build/peer/rpicam-src"
patch -d "$m/build/peer/rpicam-src" -p1 < "$patch"
bounded 600 "meson setup (rpicam-apps $rptag)" nice -n 10 chroot "$m" $E \
    PKG_CONFIG_PATH=/opt/rpi-libcamera/lib/x86_64-linux-gnu/pkgconfig \
    meson setup /build/peer/rpicam-build /build/peer/rpicam-src $rpopts
bounded 3600 "ninja (rpicam-apps $rptag)" nice -n 10 chroot "$m" $E ninja -C /build/peer/rpicam-build install
test -x "$m/opt/rpicam-apps/bin/rpicam-vid"
'
echo "$lowers"
