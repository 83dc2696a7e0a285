#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# `make deb`: shutter_<version>_<arch>.deb for the machine (or root) it runs on, with
# Debian's own tools: dpkg-shlibdeps for Depends, dpkg-deb to build. The Swift runtime
# and Foundation are linked statically (--static-swift-stdlib), so the target needs no
# Swift. The version is deploy/version.sh's. Contents (docs/deploy.md "Install the package"):
#   /usr/bin/shutterd, /usr/bin/shutterctl          stripped, static Swift runtime
#   <unitdir>/shutterd.service, shutterd.socket,    ExecStart= /usr/bin; the sockets disabled
#   shutterd-rtsp.socket, shutterd-connector.service   (the connector enabled with shutterd)
#   /usr/lib/sysusers.d/shutter.conf                the user shutter (postinst)
#   <udevdir>/rules.d/60-shutter.rules              gpio and dma_heap groups
#   /usr/share/polkit-1/rules.d/50-shutter-poweroff.rules
#   /usr/share/shutter/boards/*.json, README.md, docs/*.md, shutter.json.example
#   /etc/shutter/shutter.json                       conffile (an edited one survives upgrades)
#   /usr/share/doc/shutter/copyright, changelog.gz   DEP-5; the changelog from CHANGELOG.md
#   /usr/share/man/man1/shutterctl.1.gz, man5/shutter.json.5.gz, man8/shutterd.8.gz
# <unitdir>/<udevdir> are /lib/... on bookworm and /usr/lib/... from trixie on (merged /usr).
# Environment: DEB_SCRATCH (SwiftPM scratch path, default .build/deb), DEB_OUT (directory
# for the .deb, default .build), SHUTTER_VERSION (override), DEB_MAINTAINER (default the
# project's address below, never the builder's git identity), SOURCE_DATE_EPOCH (default
# deploy/deb/source-date-epoch.sh: the last commit's time), DEB_MAN (man pages rendered
# already by deploy/deb/man.sh, for a root without scdoc: make arm64-deb).
# Reproducible: the same commit gives the same bytes (make deb-repro checks it): every
# date is SOURCE_DATE_EPOCH's, mtimes are clamped to it, dpkg-deb sorts the archive and
# owns it by root. Prints the package's path last.
set -eu
umask 022
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
scratch=${DEB_SCRATCH:-$repo/.build/deb}
out=${DEB_OUT:-$repo/.build}
version=$(sh "$repo/deploy/version-stamp.sh")
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-"Shutter developers <dev@shutter.invalid>"}
SOURCE_DATE_EPOCH=$(sh "$here/source-date-epoch.sh")
export SOURCE_DATE_EPOCH
say() { echo "deb: $*" >&2; }

# 1. The static executables, in their own scratch path (the flags differ from `make
#    release`'s, which would otherwise rebuild each time the other runs). Full RELRO
#    (-z relro -z now): gold (Package.swift names it on arm64; GNU ld there made no GNU_RELRO
#    segment for the static Swift runtime even with -z relro) makes one, -z now adds BIND_NOW.
#    --no-export-dynamic: the programs export none of their Swift symbols (SwiftPM links
#    executables with --export-dynamic; nothing loads them): 320 KB of shutterctl's 8.3 MiB.
#    On x86_64, gold folds identical functions (--icf=safe: only those whose address is
#    never taken; not tried on arm64): 117 KB more. shutterctl: 8.00 -> 7.89 MiB.
size_flags="-Xlinker --no-export-dynamic"
[ "$(uname -m)" = x86_64 ] && size_flags="$size_flags -Xlinker --icf=safe"
for product in shutterd shutterctl; do
    # shellcheck disable=SC2086
    nice -n 10 swift build --package-path "$repo" --scratch-path "$scratch" -c release \
        --static-swift-stdlib -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now $size_flags --product "$product" >&2
done
bin="$scratch/release"
# shutterctl links FoundationEssentials, not Foundation (docs/deploy.md: Build the package):
# a module it links that imports Foundation brings ICU's data back (42 MiB more).
if grep -qaE 'icudt[0-9]+l' "$bin/shutterctl"; then
    say "FAIL shutterctl carries ICU's data: a module it links imports Foundation, not FoundationEssentials"
    exit 1
fi
# Nor FoundationEssentials (its Data, JSON coding and the rest: ~5.5 MiB): shutterctl's
# modules use PlainJSON and PlainIO (docs/deploy.md), and its metadata names no such module.
if grep -qa '20FoundationEssentials' "$bin/shutterctl"; then
    say "FAIL shutterctl carries FoundationEssentials: a module it links (ShutterCore, ShutterControl...) uses one of its types"
    exit 1
fi

# 2. The tree.
. /etc/os-release
case "${VERSION_ID:-}" in
    10|11|12) libdir=/lib ;;  # before merged /usr (lintian on bookworm expects /lib)
    *) libdir=/usr/lib ;;
esac
stage="$scratch/stage"
rm -rf "$stage"
pkg="$stage/shutter"
install -d "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg$libdir/systemd/system" "$pkg/usr/lib/sysusers.d" \
    "$pkg$libdir/udev/rules.d" "$pkg/usr/share/polkit-1/rules.d" "$pkg/usr/share/shutter/boards" \
    "$pkg/etc/shutter" "$pkg/usr/share/doc/shutter"
for exe in shutterd shutterctl; do
    install -m 0755 "$bin/$exe" "$pkg/usr/bin/$exe"
    # Symbols only: the Swift metadata sections are allocated and stay.
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$pkg/usr/bin/$exe"
done
# The unit as install.sh ships it, pointed at /usr/bin and upgraded by dpkg, not install.sh.
sed -e 's|/usr/local/bin/shutterd|/usr/bin/shutterd|' \
    -e 's|^# Installed by deploy/install.sh as /etc/systemd/system/shutterd.service.|# Installed by the shutter package (deploy/deb/build.sh).|' \
    -e 's|^# install.sh overwrites this file on upgrade.|# an upgrade of the package replaces this file.|' \
    -e 's|a system user created by install.sh|a system user created by the package|' \
    "$repo/deploy/shutterd.service" > "$pkg$libdir/systemd/system/shutterd.service"
sed -e 's|^# Installed DISABLED by deploy/install.sh.|# Installed DISABLED by the shutter package.|' \
    "$repo/deploy/shutterd.socket" > "$pkg$libdir/systemd/system/shutterd.socket"
sed -e 's|/usr/local/bin/shutterd|/usr/bin/shutterd|' \
    -e 's|^# enabled with shutterd: |# enabled with shutterd by the shutter package: |' \
    -e 's|^# shutterd. Installed by deploy/install.sh as /etc/systemd/system/shutterd-connector.service,|# shutterd. Installed by the shutter package (deploy/deb/build.sh),|' \
    "$repo/deploy/shutterd-connector.service" > "$pkg$libdir/systemd/system/shutterd-connector.service"
grep -q '^ExecStart=/usr/bin/shutterd --connector ' "$pkg$libdir/systemd/system/shutterd-connector.service" ||
    { say "FAIL the connector's ExecStart= did not move to /usr/bin"; exit 1; }
sed -e 's|^# "Live video"). Installed DISABLED.|# "Live video"). Installed DISABLED by the shutter package.|' \
    "$repo/deploy/shutterd-rtsp.socket" > "$pkg$libdir/systemd/system/shutterd-rtsp.socket"
grep -q '^ExecStart=/usr/bin/shutterd ' "$pkg$libdir/systemd/system/shutterd.service" ||
    { say "FAIL the unit's ExecStart= did not move to /usr/bin"; exit 1; }
install -m 0644 "$repo/deploy/sysusers/shutter.conf" "$pkg/usr/lib/sysusers.d/shutter.conf"
install -m 0644 "$repo/deploy/udev/60-shutter.rules" "$pkg$libdir/udev/rules.d/60-shutter.rules"
install -m 0644 "$repo/deploy/polkit/50-shutter-poweroff.rules" "$pkg/usr/share/polkit-1/rules.d/"
install -m 0644 "$repo"/boards/*.json "$pkg/usr/share/shutter/boards/"
install -m 0644 "$repo/README.md" "$pkg/usr/share/shutter/README.md"
install -d "$pkg/usr/share/shutter/docs"
install -m 0644 "$repo"/docs/*.md "$pkg/usr/share/shutter/docs/"
install -m 0644 "$repo/deploy/shutter.json.example" "$pkg/usr/share/shutter/shutter.json.example"
install -m 0644 "$repo/deploy/shutter.json.example" "$pkg/etc/shutter/shutter.json"
install -m 0644 "$here/copyright" "$pkg/usr/share/doc/shutter/copyright"
# The man pages (docs/man/*.scd through scdoc, gzip -9n).
if [ -n "${DEB_MAN:-}" ]; then
    install -d "$pkg/usr/share/man"
    cp -r "$DEB_MAN"/man* "$pkg/usr/share/man/"
else
    sh "$here/man.sh" "$pkg/usr/share/man"
fi
# The changelog: CHANGELOG.md's sections (deploy/deb/changelog.sh), dated from SOURCE_DATE_EPOCH.
sh "$here/changelog.sh" "$repo/CHANGELOG.md" "$version" "$maintainer" "$SOURCE_DATE_EPOCH" |
    gzip -9n > "$pkg/usr/share/doc/shutter/changelog.gz"
chmod 0644 "$pkg/usr/share/doc/shutter/changelog.gz"
for script in postinst prerm postrm; do
    install -m 0755 "$here/$script" "$pkg/DEBIAN/$script"
done
echo /etc/shutter/shutter.json > "$pkg/DEBIAN/conffiles"

# 3. Depends: the shared libraries the executables need (dpkg-shlibdeps reads the
#    package database), plus what the units and maintainer scripts call: procps for
#    ExecReload=/bin/kill, systemd (the service manager, systemd-sysusers) and
#    init-system-helpers (deb-systemd-helper/-invoke); and libcamera's IPA modules
#    (libcamera-ipa: the image processing algorithms a Pi's camera needs) where the
#    library only suggests them (Debian 12's libcamera0.0.3: Suggests: libcamera-ipa);
#    and the GStreamer plugins the live RTSP stream loads at run time, which no library
#    links (appsrc and audioconvert: plugins-base; rtph264pay, rtpmp4gpay: plugins-good;
#    avenc_aac: gstreamer1.0-libav); and the time stamp's default font (overlay.font:
#    fonts-dejavu-core), a file no library links.
mkdir -p "$stage/debian"
printf 'Source: shutter\n\nPackage: shutter\nArchitecture: any\n' > "$stage/debian/control"
shlibs=$(cd "$stage" && dpkg-shlibdeps -O -e shutter/usr/bin/shutterd -e shutter/usr/bin/shutterctl \
    2>"$stage/shlibdeps.log") || { cat "$stage/shlibdeps.log" >&2; say "FAIL dpkg-shlibdeps"; exit 1; }
shlibs=$(echo "$shlibs" | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { say "FAIL dpkg-shlibdeps gave no Depends"; exit 1; }
rm -rf "$stage/debian" "$stage/shlibdeps.log"
depends="$shlibs, procps, systemd, init-system-helpers (>= 1.54~), gstreamer1.0-plugins-base, gstreamer1.0-plugins-good, gstreamer1.0-libav, fonts-dejavu-core"
for lib in $(echo "$shlibs" | tr ',' '\n' | sed -n 's/^ *\(libcamera[0-9][^ ]*\).*/\1/p'); do
    if ! dpkg-query -W -f='${Depends}' "$lib" 2>/dev/null | grep -q 'libcamera-ipa'; then
        depends="$depends, libcamera-ipa"
        say "$lib does not depend on libcamera-ipa: Depends adds it"
    fi
done
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: shutter
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Recommends: polkitd, rclone
Section: video
Priority: optional
Description: headless camera service for the Raspberry Pi: tap = photo, hold = video
 One physical button: a tap takes a photo (JPEG with EXIF), a hold records an
 H.264 clip with microphone audio until release. libcamera drives the sensor,
 GPIO drives a flash and a status LED, files land in DCF layout under
 /var/lib/shutter, and systemd keeps it alive (watchdog, notify). shutterctl
 drives it from a shell; an opt-in web page (shutterd.socket) from a phone.
 Runs unchanged on a simulated board (shutterd --board sim) on any Linux
 machine.
CONTROL
(cd "$pkg" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort |
    xargs md5sum) > "$pkg/DEBIAN/md5sums"
chmod 0644 "$pkg/DEBIAN/md5sums" "$pkg/DEBIAN/control" "$pkg/DEBIAN/conffiles"
# Clamped mtimes: nothing newer than SOURCE_DATE_EPOCH (install and strip date files now).
find "$pkg" -newermt "@$SOURCE_DATE_EPOCH" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +

# 4. The package.
mkdir -p "$out"
deb="$out/shutter_${version}_${arch}.deb"
# dpkg-deb sorts the members, stamps the ar archive with SOURCE_DATE_EPOCH and (with
# --root-owner-group) owns every file by root:root. xz -9 (dpkg-deb's default is -6): its
# 64 MiB dictionary reaches from shutterd back to shutterctl, so the static Swift runtime
# and FoundationEssentials the two carry are stored about once (measured on amd64: 18.6
# MiB at -6, 15.8 MiB at -9, -9e no smaller); unpacking takes 65 MiB of memory, not 9.
dpkg-deb --root-owner-group -Zxz -z9 --build "$pkg" "$deb" >&2
say "built $deb"
say "Depends: $depends"
echo "$deb"
