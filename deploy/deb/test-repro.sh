#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# `make deb-repro`: the package is reproducible. deploy/deb/build.sh runs twice in a row,
# each into its own directory (.build/repro/1, .build/repro/2), and the two .deb files
# must be byte-identical (cmp). The static executables come from the same scratch path,
# so the second build reuses the first's (a cold first run builds them, as make deb does);
# what is checked is everything the package step adds: dates, mtimes, order, owners,
# compression, the changelog and the man pages. On a difference it names the archive
# members and the files that differ.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out="$repo/.build/repro"
rm -rf "$out"
t0=$(date +%s)
for i in 1 2; do
    mkdir -p "$out/$i"
    DEB_OUT="$out/$i" sh "$here/build.sh" > "$out/$i/path" 2> "$out/$i/build.log" ||
        { tail -20 "$out/$i/build.log"; echo "deb-repro: FAIL build $i (log $out/$i/build.log)"; exit 1; }
    echo "deb-repro: build $i: $(cat "$out/$i/path") ($(( $(date +%s) - t0 )) s since the start)"
    # A second apart at least: a date taken from the clock would differ.
    [ "$i" = 2 ] || sleep 1
done
a=$(cat "$out/1/path"); b=$(cat "$out/2/path")
if cmp -s "$a" "$b"; then
    echo "deb-repro: ok   two builds in a row are byte-identical ($(sha256sum < "$a" | cut -c1-16), $(stat -c %s "$a") bytes, $(( $(date +%s) - t0 )) s)"
    exit 0
fi
echo "deb-repro: FAIL the two builds differ:"
for i in 1 2; do
    mkdir -p "$out/x$i/ar" "$out/x$i/tree"
    (cd "$out/x$i/ar" && ar x "$(cat "$out/$i/path")")
    dpkg-deb -R "$(cat "$out/$i/path")" "$out/x$i/tree"
    dpkg-deb -c "$(cat "$out/$i/path")" > "$out/x$i/listing"
done
for m in $(ls "$out/x1/ar"); do cmp -s "$out/x1/ar/$m" "$out/x2/ar/$m" || echo "  ar member $m differs"; done
diff -r -q "$out/x1/tree" "$out/x2/tree" | sed 's/^/  /' || true
diff "$out/x1/listing" "$out/x2/listing" | head -20 | sed 's/^/  listing: /' || true
exit 1
