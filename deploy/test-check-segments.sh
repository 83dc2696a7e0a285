#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Proves deploy/check-segments.sh can fail: links tiny C programs with a writable and
# executable segment three ways (ld --omagic: text and data in one RWX LOAD; an "awx"
# section, what a hand-written `.section` can do; -z execstack: an RWE GNU_STACK) and
# expects the check to reject each, and to pass an ordinary program. A second or so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-$(command -v cc || command -v clang || true)}
[ -n "$CC" ] || { echo "test-check-segments: FAIL no C compiler" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
printf 'int main(void) { return 0; }\n' > ok.c
printf 'void _start(void) { for (;;) ; }\n' > bare.c
cat > awx.c <<'EOF'
__asm__(".section .shutter_wx,\"awx\",%progbits\n.byte 0\n.previous");
int main(void) { return 0; }
EOF
# The linker warns about RWX segments on purpose here; keep its output in a log.
{
    "$CC" ok.c -o good
    "$CC" awx.c -o awx
    "$CC" ok.c -o execstack -Wl,-z,execstack
} > cc.log 2>&1 || { cat cc.log >&2; echo "test-check-segments: FAIL compiling the samples" >&2; exit 1; }
# --omagic gives one RWX LOAD with GNU ld (bfd) only: gold (what the Swift toolchain's clang
# uses by default) maps text apart anyway. Name bfd, so the sample is the same whichever
# linker the compiler picks; without ld.bfd the sample is skipped, saying so.
omagic=no
if command -v ld.bfd >/dev/null; then
    "$CC" -fuse-ld=bfd -fno-pie -nostdlib -static -Wl,--omagic bare.c -o omagic > omagic.log 2>&1 \
        || { cat omagic.log >&2; echo "test-check-segments: FAIL linking the --omagic sample with ld.bfd" >&2; exit 1; }
    omagic=yes
fi

failed=0
expect() { # expect RC FILE WHAT
    rc=0
    sh "$here/check-segments.sh" "$2" > out.log 2>&1 || rc=$?
    if [ "$rc" = "$1" ]; then
        echo "test-check-segments: ok   $3 (exit $rc)"
    else
        echo "test-check-segments: FAIL $3: exit $rc, expected $1"; sed 's/^/    /' out.log; failed=1
    fi
}
expect 0 good "an ordinary program passes"
if [ "$omagic" = yes ]; then
    expect 1 omagic "ld --omagic (one RWX LOAD segment) fails"
else
    echo "test-check-segments: skip ld --omagic sample: no ld.bfd (GNU ld) on this machine"
fi
expect 1 awx "an \"awx\" section (RWX LOAD segment) fails"
expect 1 execstack "-z execstack (RWE GNU_STACK) fails"
# A directory: the good program alone passes, with the bad ones it fails.
mkdir gooddir && cp good gooddir/
expect 0 gooddir "a directory of good executables passes"
expect 1 . "a directory with a bad executable fails"

# The arm64 failure of issue 14, reproduced on any host with swiftc and GNU ld: swiftc
# puts some protocol conformance descriptors (a Hashable enum's, here) into a writable
# ".rodata"; GNU ld with -z noseparate-code (its default on aarch64) maps .text and
# .rodata in one segment, which becomes RWE. -z separate-code keeps code apart (the fix
# until Package.swift named gold on arm64, which puts that .rodata with the data).
if command -v swiftc >/dev/null && command -v ld.bfd >/dev/null; then
    printf 'enum Kind: Hashable { case a, b }\nprint(Kind.a.hashValue != 0)\n' > h.swift
    {
        swiftc -c h.swift -o h.o
        swiftc h.o -o swift-noseparate -use-ld=bfd -Xlinker -z -Xlinker noseparate-code
        swiftc h.o -o swift-separate -use-ld=bfd -Xlinker -z -Xlinker separate-code
    } > swiftc.log 2>&1 || { cat swiftc.log >&2; echo "test-check-segments: FAIL swiftc" >&2; exit 1; }
    if readelf -SW h.o | grep -E ' \.rodata +PROGBITS .* W' >/dev/null; then
        echo "test-check-segments: ok   swiftc emits a writable .rodata (the cause on arm64)"
    else
        echo "test-check-segments: note swiftc emitted no writable .rodata this time"
    fi
    expect 1 swift-noseparate "swift + GNU ld -z noseparate-code (arm64's layout) fails"
    expect 0 swift-separate "swift + GNU ld -z separate-code (the fix) passes"
fi
exit "$failed"
