#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds the package with Swift 6.0.3 (Debian trixie's swiftlang, what Raspberry Pi OS
# trixie ships) in a debootstrap chroot, against trixie's libgpiod 2, libcamera 0.4 and
# FFmpeg 7. Root only; ~4.4 GB in $ROOT, cached. Not part of `make test` (size, time).
# --test runs the tests there too, with the tools they call (python3 for the page's
# checks, openssl for the TLS certificates, systemd's tools), so a failure is a result,
# not a missing program. Usage: sudo sh deploy/check-swift60.sh [--test]
set -eu
ROOT=${ROOT:-/var/tmp/trixie-swift60/root}
E="env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root"
here=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$ROOT/usr/bin/swift" ]; then
    # The Debian archive this machine's apt uses (MIRROR overrides).
    MIRROR=${MIRROR:-$(sh "$here/deploy/apt-archive-uri.sh")}
    command -v debootstrap >/dev/null || sh "$here/deploy/install-deps.sh" debootstrap
    [ -d "$ROOT/usr" ] || nice debootstrap --variant=minbase trixie "$ROOT" "$MIRROR"
    cp /etc/resolv.conf "$ROOT/etc/"
    chroot "$ROOT" $E apt-get update -q
    chroot "$ROOT" $E env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        swiftlang pkg-config libturbojpeg0-dev libjpeg62-turbo-dev libexif-dev libavcodec-dev \
        libavformat-dev libavutil-dev libswresample-dev libswscale-dev libcamera-dev libgpiod-dev \
        libasound2-dev build-essential ffmpeg exif libimage-exiftool-perl e2fsprogs systemd \
        libmicrohttpd-dev libsodium-dev libmosquitto-dev python3 openssl libfreetype-dev \
        libgstrtspserver-1.0-dev gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-libav
fi
# Packages added since a cached root was made (the web page's libraries, MQTT's, the
# tests' tools, the live stream's GStreamer, the time stamp's FreeType).
for p in libmicrohttpd-dev libsodium-dev libmosquitto-dev systemd python3 openssl libfreetype-dev \
         libgstrtspserver-1.0-dev gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-libav; do
    chroot "$ROOT" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || {
        cp /etc/resolv.conf "$ROOT/etc/"
        chroot "$ROOT" $E env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$p"
    }
done
mount --bind /proc "$ROOT/proc"; mount --bind /dev "$ROOT/dev"
trap 'umount "$ROOT/dev" "$ROOT/proc"' EXIT
rm -rf "$ROOT/src" && mkdir "$ROOT/src"
(cd "$here" && git archive HEAD) | tar -C "$ROOT/src" -xf -
nice chroot "$ROOT" $E bash -c 'cd /src && swift --version && swift build --build-tests 2>&1 | tee /tmp/b.log | tail -3 && ! grep -E "(error|warning):" /tmp/b.log'
if [ "${1:-}" = "--test" ]; then
    nice chroot "$ROOT" $E bash -c 'cd /src && swift test --skip-build --disable-swift-testing'
fi
echo "check-swift60: Swift 6.0 build clean"
