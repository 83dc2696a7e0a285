#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages Shutter needs to build, test and run, when missing.
# Called by `make test`, `make run` and `make bench`; safe to run again.
# `install-deps.sh PKG...` installs those packages instead (deploy/hil/install-deps.sh);
# `install-deps.sh --list` prints the list (deploy/arm64/build-root.sh takes its -dev names).
# `install-deps.sh --test` adds what only the tests need (`make test`): rclone (the upload
# tests' SFTP and WebDAV servers, `rclone serve`; S3 is moto's, deploy/upload/s3-server.sh,
# a venv from PyPI made at the first run), the web page's
# browser test drives Debian's chromium (openssl makes the TLS test's certificate, testssl.sh
# checks its protocols, ciphers and renegotiation; ab and slowhttptest load the server;
# python3-requests is the Home Assistant test's HTTP client; GStreamer's gst-discoverer-1.0 with
# its MP4 demuxer and H.264/AAC decoders reads a finished clip's duration as another player
# would; scdoc renders the man pages for their check, deploy/check-man-pages.py; mosquitto and
# mosquitto-clients are the MQTT tests' broker and clients; vlc-bin's cvlc plays the live
# stream headless over HTTP, /api/live.mp4: Debian's VLC has no RTSP client), so `make run` on a Pi does not pull a browser in. The live RTSP server
# (libgstrtspserver) runs appsrc (plugins-base), rtph264pay and rtpmp4gpay (plugins-good) and
# avenc_aac (gstreamer1.0-libav). The time stamp in the picture renders with FreeType
# (libfreetype-dev) in DejaVu Sans Mono Bold (fonts-dejavu-core, overlay.font's default).
set -eu
PKGS="pkg-config libturbojpeg0-dev libjpeg62-turbo-dev libexif-dev \
libavcodec-dev libavformat-dev libavutil-dev libswresample-dev libswscale-dev ffmpeg \
libcamera-dev libgpiod-dev gpiod libasound2-dev alsa-utils sox tmux \
libimage-exiftool-perl systemd e2fsprogs \
libmicrohttpd-dev libsodium-dev libmosquitto-dev \
libgstrtspserver-1.0-dev gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-libav \
libfreetype-dev fonts-dejavu-core"
TEST_PKGS="rclone chromium chromium-driver python3-selenium openssl testssl.sh apache2-utils slowhttptest python3-requests \
gstreamer1.0-plugins-base-apps scdoc mosquitto mosquitto-clients vlc-bin vlc-plugin-base"
[ "${1:-}" = "--list" ] && { echo $PKGS; exit 0; }
[ "${1:-}" = "--test" ] && { shift; PKGS="$PKGS $TEST_PKGS"; }
[ $# -gt 0 ] && PKGS="$*"
# On arm64 Package.swift links with gold (GNU_RELRO and W^X): trixie ships it apart from
# binutils, bookworm inside it.
if [ $# -eq 0 ] && [ "$(uname -m)" = aarch64 ] && ! command -v ld.gold >/dev/null; then PKGS="$PKGS binutils-gold"; fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $missing
