#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# W^X check: fails when an ELF executable has a program header segment that is both
# writable and executable (a `LOAD ... RWE` code-and-data segment, or an executable
# stack, `GNU_STACK RWE`). Such a binary undoes what the unit asks for with
# MemoryDenyWriteExecute=yes. Any architecture: readelf reads arm64 files on x86_64.
# Usage: check-segments.sh [-v] PATH...   (a PATH that is a directory: the ELF
# executables and shared objects directly in it, e.g. .build/debug). -v prints every
# file's segments. One line per file; exits 1 if any file fails, 2 if none was found.
set -eu
verbose=0
[ "${1:-}" = "-v" ] && { verbose=1; shift; }
[ $# -gt 0 ] || { echo "usage: check-segments.sh [-v] FILE|DIR..." >&2; exit 2; }
command -v readelf >/dev/null || { echo "check-segments: readelf missing (binutils)" >&2; exit 2; }

is_elf() { [ "$(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

files=$(mktemp)
trap 'rm -f "$files"' EXIT
for p in "$@"; do
    if [ -d "$p" ]; then
        find -L "$p" -maxdepth 1 -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) | sort
    else
        echo "$p"
    fi
done > "$files"

n=0; bad=0
while IFS= read -r f; do
    is_elf "$f" || continue
    n=$((n + 1))
    # readelf -lW: "TYPE OFFSET VADDR PADDR FILESZ MEMSZ FLG ALIGN" where FLG is one to
    # three of R, W, E separated by spaces; the section mapping follows the header list.
    segs=$(LC_ALL=C readelf -lW "$f" | awk '
        /^ *Section to Segment mapping/ { exit }
        /^  [A-Z_]+ +0x/ { flg = ""; for (i = 7; i < NF; i++) flg = flg $i; printf "%d %s %s\n", idx++, $1, flg }')
    wx=$(echo "$segs" | awk '$3 ~ /W/ && $3 ~ /E/')
    summary=$(echo "$segs" | awk '$2 == "LOAD" || $2 == "GNU_STACK" { printf "%s%s %s", sep, $2, $3; sep = ", " }')
    if [ -n "$wx" ]; then
        bad=$((bad + 1))
        echo "check-segments: FAIL $f: writable and executable: $(echo "$wx" | awk '{printf "%s%s %s", s, $2, $3; s = ", "}')"
        # Which sections the offending LOAD segments hold (readelf's mapping, by index).
        for i in $(echo "$wx" | awk '$2 == "LOAD" {print $1}'); do
            LC_ALL=C readelf -lW "$f" | awk -v i="$i" '
                /Section to Segment mapping/ { m = 1; next }
                m && $1 == sprintf("%02d", i) { $1 = ""; print "    segment " i " sections:" $0 }'
        done
    elif [ "$verbose" = 1 ]; then
        echo "check-segments: ok   $f: $summary"
    fi
done < "$files"
[ "$n" -gt 0 ] || { echo "check-segments: no ELF file in: $*" >&2; exit 2; }
if [ "$bad" -gt 0 ]; then
    echo "check-segments: $bad of $n ELF files have a writable and executable segment" >&2
    exit 1
fi
echo "check-segments: ok, no writable+executable segment in $n ELF files ($*)"
