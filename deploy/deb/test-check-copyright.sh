#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Proves deploy/deb/check-copyright.py can fail. Executables: a tiny program linked with
# `swiftc -static-stdlib` that uses FoundationEssentials (static Swift runtime,
# FoundationEssentials, Dispatch, no ICU: as the package's programs) and the debug shutterd
# (libavcodec, dynamic Swift runtime). The package's copyright file passes; copies with the
# GPL note, the Swift runtime's paragraph or the Runtime Library Exception taken out fail,
# naming it; so does the old non-DEP-5 file, static paragraphs when no executable is static,
# and the file against a static program on full Foundation (ICU's data, which the package
# no longer carries); the package's copyright of before (ICU and full Foundation named)
# fails against the FoundationEssentials program. ~15 s (two static links).
#   test-check-copyright.sh [DEBUG-BIN-DIR]      (default .build/debug)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:-$repo/.build/debug}
[ -x "$bin/shutterd" ] || { echo "test-check-copyright: FAIL no $bin/shutterd (build it first)"; exit 1; }
command -v swiftc >/dev/null || { echo "test-check-copyright: FAIL no swiftc"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'import FoundationEssentials\nimport Dispatch\nprint(Date.now, DispatchQueue.main.label)\n' > "$tmp/s.swift"
swiftc -static-stdlib "$tmp/s.swift" -o "$tmp/static-foundation" > "$tmp/swiftc.log" 2>&1 ||
    { cat "$tmp/swiftc.log"; echo "test-check-copyright: FAIL swiftc -static-stdlib"; exit 1; }
printf 'import Foundation\nprint(Date().formatted(), DispatchQueue.main.label)\n' > "$tmp/full.swift"
swiftc -static-stdlib "$tmp/full.swift" -o "$tmp/static-full-foundation" > "$tmp/swiftc.log" 2>&1 ||
    { cat "$tmp/swiftc.log"; echo "test-check-copyright: FAIL swiftc -static-stdlib (full Foundation)"; exit 1; }
good="$here/copyright"
# The header's note on FFmpeg (the Comment's paragraph that names libavcodec) removed.
awk '/^ Linked dynamically, from Debian/ { skip = 1 } skip && /^ \.$/ { skip = 0; next } !skip' "$good" > "$tmp/no-gpl"
sed -i '/libavcodec\|GPL-2+/d' "$tmp/no-gpl"
# The Swift runtime's Files paragraph removed (from its Files: line to the blank line).
awk '/^Files: usr\/lib\/swift_static\/linux\/libswiftCore.a/ { skip = 1 } skip && /^$/ { skip = 0; next } !skip' "$good" > "$tmp/no-runtime"
sed '/As an exception, if you use/,/4(a), 4(b) and 4(d) of the License./d' "$good" > "$tmp/no-exception"
# Before shutterd left full Foundation: ICU's and full Foundation's paragraphs.
git -C "$repo" show cf1483e:deploy/deb/copyright > "$tmp/with-icu" 2>/dev/null || : > "$tmp/with-icu"
git -C "$repo" show 0c13598:deploy/deb/copyright > "$tmp/not-dep5" 2>/dev/null ||
    printf 'Shutter\n\nLicense: the repository states no license yet.\n' > "$tmp/not-dep5"

failed=0
expect() { # expect RC COPYRIGHT WHAT TEXT EXE...
    rc_want=$1; file=$2; what=$3; text=$4; shift 4
    rc=0
    python3 "$here/check-copyright.py" --copyright "$file" "$@" > "$tmp/out.log" 2>&1 || rc=$?
    if [ "$rc" != "$rc_want" ]; then
        echo "test-check-copyright: FAIL $what: exit $rc, expected $rc_want"; sed 's/^/    /' "$tmp/out.log"; failed=1
    elif [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/out.log"; then
        echo "test-check-copyright: FAIL $what: the output does not say '$text'"; sed 's/^/    /' "$tmp/out.log"; failed=1
    else
        echo "test-check-copyright: ok   $what (exit $rc)"
    fi
}
expect 0 "$good" "the package's copyright file passes" "" "$tmp/static-foundation" "$bin/shutterd"
expect 1 "$tmp/no-gpl" "without the note on libavcodec's GPL-2+ fails" "no note naming libavcodec and GPL-2+" \
    "$tmp/static-foundation" "$bin/shutterd"
expect 1 "$tmp/no-runtime" "without the Swift runtime's paragraph fails" "no Files paragraph names libswiftCore" \
    "$tmp/static-foundation" "$bin/shutterd"
expect 1 "$tmp/no-exception" "without the Runtime Library Exception fails" "lacks the Runtime Library Exception" \
    "$tmp/static-foundation" "$bin/shutterd"
expect 1 "$tmp/not-dep5" "the old free-text file fails" "is not DEP-5" "$tmp/static-foundation" "$bin/shutterd"
expect 1 "$good" "static paragraphs with no static executable fail" "but no executable carries it statically" "$bin/shutterd"
expect 1 "$good" "a static program on full Foundation fails (ICU's data)" \
    "carry ICU and its data statically, but no Files paragraph names ICU" "$tmp/static-full-foundation" "$bin/shutterd"
expect 1 "$good" "a static program on full Foundation fails (full Foundation)" \
    "no Files paragraph names libFoundation.a or" "$tmp/static-full-foundation" "$bin/shutterd"
[ ! -s "$tmp/with-icu" ] || expect 1 "$tmp/with-icu" "ICU's paragraph when no executable carries ICU fails" \
    "a Files paragraph names ICU and its data (ICU), but no executable carries it statically" \
    "$tmp/static-foundation" "$bin/shutterd"
exit "$failed"
