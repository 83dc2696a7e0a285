#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The package's figures: its size, its installed size, and the static executables
# (what it ships) against the dynamic build (`make release`): file size and start time.
# Start time: the median wall time of 31 runs of `EXE --version` (process start, dynamic
# linking and the Swift runtime's set-up; no camera), the builds taking turns so that
# other work on the machine weighs on each alike.
#   figures.sh DEB DYNAMIC-BIN-DIR
set -eu
deb=$1; dyn=$2
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
timings() { # timings EXE...: 31 rounds, each EXE --version once per round; "EXE microseconds" lines
    i=0
    while [ $i -lt 31 ]; do
        for x in "$@"; do
            s=$(date +%s%N); "$x" --version >/dev/null; e=$(date +%s%N)
            echo "$x $(( (e - s) / 1000 ))"
        done
        i=$((i + 1))
    done
}
median_ms() { # median_ms EXE < times
    awk -v x="$1" '$1 == x { print $2 }' | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f ms", v[int((NR + 1) / 2)] / 1000 }'
}
installed=$(dpkg-deb -f "$deb" Installed-Size)
echo "figures: $(basename "$deb"): $(mib "$(stat -c %s "$deb")") (xz), installed $(mib $((installed * 1024)))"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
for exe in shutterd shutterctl; do
    [ -x "$dyn/$exe" ] || { echo "figures: no $exe in $dyn (make release)" >&2; exit 1; }
    timings "$dyn/$exe" "$tmp/usr/bin/$exe" > "$tmp/times"
    runtime=$(ldd "$dyn/$exe" | awk '/swift|Foundation|dispatch|BlocksRuntime/ { print $3 }' | xargs stat -L -c %s |
        awk '{ s += $1 } END { print s }')
    printf 'figures: %-10s dynamic %s + Swift runtime %s (shared), starts in %s; static (packaged, stripped) %s, starts in %s\n' \
        "$exe" "$(mib "$(stat -c %s "$dyn/$exe")")" "$(mib "$runtime")" "$(median_ms "$dyn/$exe" < "$tmp/times")" \
        "$(mib "$(stat -c %s "$tmp/usr/bin/$exe")")" "$(median_ms "$tmp/usr/bin/$exe" < "$tmp/times")"
done
