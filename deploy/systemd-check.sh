#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# CI check of deploy/shutterd.service, without systemd running as PID 1:
#  1. `systemd-analyze verify` must print nothing and succeed;
#  2. `systemd-analyze security --offline=yes` must report an exposure <= 2.5.
# The socket units beside it (shutterd.socket, shutterd-rtsp.socket) are verified with it; the
# security score rates services only and does not change with a passed socket.
# verify refuses a unit whose ExecStart binary is missing, and CI has no
# /usr/local/bin/shutterd: it checks a temp copy whose ExecStart path is replaced
# by an existing executable (/bin/true); every other line is the shipped unit.
# Usage: deploy/systemd-check.sh [UNIT] (default: the unit beside this script).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
unit=${1:-$here/shutterd.service}
max_exposure=2.5

command -v systemd-analyze >/dev/null 2>&1 || {
    echo "systemd-check: systemd-analyze not found; install the 'systemd' package (deploy/install-deps.sh)" >&2
    exit 2
}
[ -f "$unit" ] || { echo "systemd-check: no unit file $unit" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$unit")
sed 's#^ExecStart=\(-\|@\|:\|+\|!\)*/[^ ]*#ExecStart=/bin/true#' "$unit" > "$tmp/$name"
grep -q '^ExecStart=/bin/true' "$tmp/$name" || {
    echo "systemd-check: no ExecStart=/absolute/path line in $unit" >&2
    exit 1
}

status=0

# 1. verify: any output (warnings come with exit status 0) is a failure.
if ! out=$(systemd-analyze verify --man=no "$tmp/$name" 2>&1) || [ -n "$out" ]; then
    echo "systemd-check: FAIL systemd-analyze verify $name:" >&2
    printf '%s\n' "$out" >&2
    status=1
else
    echo "systemd-check: ok   systemd-analyze verify $name: clean"
fi

# 1b. The socket units beside it (the web page's, the RTSP stream's: same stem), each
# verified with its service.
for sock in "${unit%.service}.socket" "${unit%.service}"-*.socket; do
    [ -f "$sock" ] || continue
    cp "$sock" "$tmp/"
    if ! out=$(systemd-analyze verify --man=no "$tmp/$(basename "$sock")" "$tmp/$name" 2>&1) || [ -n "$out" ]; then
        echo "systemd-check: FAIL systemd-analyze verify $(basename "$sock"):" >&2
        printf '%s\n' "$out" >&2
        status=1
    else
        echo "systemd-check: ok   systemd-analyze verify $(basename "$sock"): clean"
    fi
done

# 2. security: the overall exposure, compared in tenths (no floating point in sh).
report=$(systemd-analyze security --offline=yes --no-pager "$tmp/$name" 2>&1) || true
figure=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9]*\.[0-9]\).*/\1/p' | tail -n 1)
if [ -z "$figure" ]; then
    echo "systemd-check: FAIL systemd-analyze security --offline=yes printed no exposure level:" >&2
    printf '%s\n' "$report" >&2
    status=1
else
    tenths=$(echo "$figure" | tr -d .)
    limit=$(echo "$max_exposure" | tr -d .)
    if [ "$tenths" -le "$limit" ]; then
        echo "systemd-check: ok   systemd-analyze security $name: exposure $figure (limit $max_exposure)"
    else
        echo "systemd-check: FAIL systemd-analyze security $name: exposure $figure > $max_exposure; what counts:" >&2
        printf '%s\n' "$report" | grep '✗' >&2 || true
        status=1
    fi
fi
exit $status
