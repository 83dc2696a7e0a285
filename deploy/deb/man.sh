#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The man pages (docs/man/NAME.SECTION.scd, scdoc source) as the package installs them:
#   man.sh OUTDIR        -> OUTDIR/manSECTION/NAME.SECTION.gz (roff, gzip -9n)
# The date in each page's header is SOURCE_DATE_EPOCH's (scdoc reads it), so the same
# commit gives the same bytes. make deb calls it from deploy/deb/build.sh; make arm64-deb
# on the host (deploy/arm64/run.sh: the arm64 build root has no scdoc) and passes the
# result as DEB_MAN.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
command -v scdoc >/dev/null || { echo "man: FAIL scdoc is not installed (deploy/deb/install-deps.sh)" >&2; exit 1; }
[ -n "${SOURCE_DATE_EPOCH:-}" ] || { echo "man: FAIL SOURCE_DATE_EPOCH is not set" >&2; exit 1; }
export SOURCE_DATE_EPOCH
n=0
for src in "$here"/../../docs/man/*.scd; do
    page=$(basename "$src" .scd)          # shutterd.8
    section=${page##*.}
    mkdir -p "$out/man$section"
    scdoc < "$src" > "$out/man$section/$page" || { echo "man: FAIL scdoc on $src" >&2; exit 1; }
    gzip -9nf "$out/man$section/$page"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "man: FAIL no docs/man/*.scd" >&2; exit 1; }
