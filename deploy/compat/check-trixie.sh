#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# `make compat`: do the C/C++ shims still compile against Debian trixie's headers
# (libgpiod 2.x, libcamera 0.4, FFmpeg 7), and the libcamera shim against
# trixie-backports' libcamera 0.7 (what Raspberry Pi OS ships)? Fetches them into
# .build/compat/trixie and .build/compat/trixie-backports (cached, see
# fetch-trixie-headers.sh), then runs the compiler with -fsyntax-only on every
# shim. One line per check; exits non-zero if any check fails.
set -eu
cd "$(dirname "$0")/../.."

OUT=${OUT:-.build/compat/trixie}
BACKPORTS_OUT=${BACKPORTS_OUT:-.build/compat/trixie-backports}
# The system compilers, else the clang that comes with the Swift toolchain.
CC=${CC:-$(command -v cc || command -v clang || true)}
CXX=${CXX:-$(command -v c++ || command -v clang++ || true)}
if [ -z "$CC" ] || [ -z "$CXX" ]; then
    echo "compat: FAIL no C/C++ compiler: install build-essential (or put the Swift toolchain's clang on PATH)" >&2
    exit 1
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
    echo "compat: FAIL needs apt-get and dpkg-deb (a Debian or Debian-based system)" >&2; exit 1; }
OUT=$OUT sh deploy/compat/fetch-trixie-headers.sh
# Only libcamera-dev from backports: its headers include nothing else of the archive.
OUT=$BACKPORTS_OUT SUITES="trixie trixie-backports" PKGS="libcamera-dev/trixie-backports" \
    sh deploy/compat/fetch-trixie-headers.sh
ROOT=$(cd "$OUT/root" && pwd)
BACKPORTS_ROOT=$(cd "$BACKPORTS_OUT/root" && pwd)
INC="$ROOT/usr/include"
MULTIARCH=$($CC -print-multiarch 2>/dev/null || true)
[ -n "$MULTIARCH" ] || MULTIARCH="$(uname -m)-linux-gnu"
# Trixie's headers first; the host's are still there for libc and libstdc++.
TRIXIE="-I$INC -I$INC/$MULTIARCH -I$INC/libcamera"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

failed=0
pass() { echo "compat: ok   $1"; }
fail() { echo "compat: FAIL $1"; [ -s "$TMP/log" ] && sed 's/^/    /' "$TMP/log"; failed=1; }

# A header that exists on the host but not in the fetched tree would be picked up
# from /usr/include silently: reject any library header resolved from there.
host_headers() {
    tr ' \\' '\n\n' < "$TMP/deps" | grep -E '^/usr/include/(gpiod\.h|microhttpd\.h|sodium\.h|sodium/|libcamera/|freetype2/|([^/]+/)?lib(avcodec|avformat|avutil|swresample|swscale)/)' || true
}

# check NAME COMPILER FLAGS... FILE: syntax-check FILE, and list its dependencies
# to prove which headers were used.
check() {
    name=$1; shift
    compiler=$1; shift
    if "$compiler" -fsyntax-only "$@" >"$TMP/log" 2>&1 && "$compiler" -M "$@" >"$TMP/deps" 2>/dev/null; then
        leaked=$(host_headers)
        if [ -n "$leaked" ]; then
            echo "host headers used instead of trixie's: $leaked" > "$TMP/log"
            fail "$name"
        else
            pass "$name"
        fi
    else
        fail "$name"
    fi
}

# 1. The fetched headers are the versions this check is about.
cat > "$TMP/versions.c" <<'SRC'
#include <gpiod.h>
#ifdef GPIOD_LINE_BULK_MAX_LINES
#error "gpiod.h is the v1 API"
#endif
#include <libavcodec/version.h>
#include <libavformat/version.h>
#include <libavutil/version.h>
#if LIBAVCODEC_VERSION_MAJOR != 61 || LIBAVFORMAT_VERSION_MAJOR != 61 || LIBAVUTIL_VERSION_MAJOR != 59
#error "not FFmpeg 7 (libavcodec 61, libavformat 61, libavutil 59)"
#endif
SRC
check "headers: libgpiod v2 API, FFmpeg 7 (libavcodec 61)" "$CC" $TRIXIE "$TMP/versions.c"
cat > "$TMP/versions.cpp" <<'SRC'
#include <libcamera/version.h>
static_assert(LIBCAMERA_VERSION_MAJOR == 0 && LIBCAMERA_VERSION_MINOR == 4, "not libcamera 0.4");
SRC
check "headers: libcamera 0.4" "$CXX" -std=c++17 $TRIXIE "$TMP/versions.cpp"

# 2. Every shim source that exists (other branches add theirs).
found=0
for dir in Sources/C*Shim* Sources/CShutterAV Sources/CShutterSys Sources/CShutterWeb Sources/CShutterPassword; do
    [ -d "$dir" ] || continue
    own="-I$dir"
    [ -d "$dir/include" ] && own="$own -I$dir/include"
    for src in $(find "$dir" -type f \( -name '*.c' -o -name '*.cpp' -o -name '*.cc' \) | sort); do
        found=1
        case "$src" in
            *.c) check "$src (C, trixie headers)" "$CC" -std=gnu11 -Wall $own $TRIXIE "$src" ;;
            *) check "$src (C++17, trixie headers)" "$CXX" -std=c++17 -Wall $own $TRIXIE "$src" ;;
        esac
    done
done
[ "$found" -eq 1 ] || { echo "" > "$TMP/log"; fail "no shim sources found under Sources/C*Shim*, Sources/CShutterAV or Sources/CShutterSys"; }
# The time stamp's shim against trixie's FreeType (its headers live in freetype2/).
if [ -f Sources/CShutterOverlay/shutter_overlay.c ]; then
    check "Sources/CShutterOverlay/shutter_overlay.c (C, trixie FreeType headers)" "$CC" -std=gnu11 -Wall \
        -ISources/CShutterOverlay/include $TRIXIE -I"$INC/freetype2" Sources/CShutterOverlay/shutter_overlay.c
fi

# 3. The FFmpeg module map's umbrella header, which Swift imports directly.
if [ -f Sources/CFFmpeg/shim.h ]; then
    printf '#include "%s/Sources/CFFmpeg/shim.h"\n' "$(pwd)" > "$TMP/ffmpeg.c"
    check "Sources/CFFmpeg/shim.h (FFmpeg 7 headers)" "$CC" -std=gnu11 $TRIXIE "$TMP/ffmpeg.c"
fi

# 4. The gpiod shim must take its v2 branch on trixie.
if [ -f Sources/CGPIODShim/shim.c ]; then
    printf '#include "%s/Sources/CGPIODShim/shim.c"\n#ifndef SHUTTER_GPIOD_V2\n#error "v1 branch taken"\n#endif\n' \
        "$(pwd)" > "$TMP/gpiod-v2.c"
    check "Sources/CGPIODShim: v2 branch selected, -Werror" "$CC" -std=gnu11 -Wall -Wextra -Werror \
        -ISources/CGPIODShim/include $TRIXIE "$TMP/gpiod-v2.c"
fi

# 5. libcamera 0.7 (trixie-backports; Raspberry Pi OS ships 0.7 too): the shim's version
# guards take their newest branches, and -Werror fails on anything it uses that is
# deprecated there. (Controls are looked up by name, so ExposureTimeMode and
# AnalogueGainMode, manual exposure from 0.5, need no compile-time guard.)
BINC="$BACKPORTS_ROOT/usr/include"
BACKPORTS="-I$BINC -I$BINC/$MULTIARCH -I$BINC/libcamera"
cat > "$TMP/version07.cpp" <<'SRC'
#include <libcamera/version.h>
static_assert(LIBCAMERA_VERSION_MAJOR == 0 && LIBCAMERA_VERSION_MINOR == 7, "not libcamera 0.7");
SRC
check "headers: libcamera 0.7 (trixie-backports)" "$CXX" -std=c++17 $BACKPORTS "$TMP/version07.cpp"
for src in $(find Sources/CLibcameraShim -type f -name '*.cpp' | sort); do
    check "$src (C++17, libcamera 0.7 headers, -Werror)" "$CXX" -std=c++17 -Wall -Wextra -Werror \
        -ISources/CLibcameraShim/include \
        $BACKPORTS "$src"
done

if [ "$failed" -ne 0 ]; then
    echo "compat: FAILED: a shim does not compile against Debian trixie's headers (see above)" >&2
    exit 1
fi
echo "compat: all checks passed against trixie headers in $OUT and libcamera 0.7 in $BACKPORTS_OUT"
