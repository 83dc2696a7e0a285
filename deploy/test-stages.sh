#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# make test's stages, one after the other, each timed; at the end a table of each stage's
# seconds and the total, also when a stage fails or the run is interrupted. As make would,
# the first stage that fails ends the run: the table shows what ran, then this exits with
# that stage's status.
#
#   test-stages.sh NAME COMMAND [NAME COMMAND...]
#
# Each COMMAND runs with `sh -c`, printed first as make prints a recipe's line. The stage
# named `hil` (make hil: deploy/hil/run.sh) is split by the lines run.sh prints on its
# standard output, which is copied through tee (its standard error is left alone):
# "hil: kernel PATH (N s)" adds N to the row `hil kernel`; "hil: ROOT: N s" (a root's
# whole run, its kernel included) is the row `hil ROOT` less that root's kernel; what is
# left of the stage (make's deps and version, run.sh's own setup, a root that stopped
# early) is the row `hil (rest)`. Tested with fake stages by deploy/test-test-stages.sh.
set -u
if [ $# -eq 0 ] || [ $(( $# % 2 )) -ne 0 ]; then
    echo "usage: test-stages.sh NAME COMMAND [NAME COMMAND...]" >&2
    exit 64
fi
# make -n (MAKEFLAGS' first word holds the one-letter flags): print the stages' commands, run none.
case "${MAKEFLAGS:-}" in
    -*|"") ;;
    *) case "${MAKEFLAGS%% *}" in *n*)
        while [ $# -gt 0 ]; do echo "$2"; shift 2; done
        exit 0 ;;
    esac ;;
esac
tmp=$(mktemp -d)
rows=$tmp/rows
: > "$rows"
current=""
started=0
start_all=$(date +%s)

# row NAME SECONDS [NOTE]
row() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >> "$rows"; }

table() {
    echo
    echo "make test: seconds per stage"
    awk -F '\t' -v total="$(( $(date +%s) - start_all ))" '
        { printf "  %-16s %6d s%s\n", $1, $2, ($3 == "" ? "" : "  " $3) }
        END { printf "  %-16s %6d s\n", "total", total }' "$rows"
}

# hil_rows SECONDS LOG: the hil stage's rows from run.sh's lines (above).
hil_rows() {
    awk -v whole="$1" -v note="${2:-}" '
        /^hil: kernel .* \([0-9]+ s\)$/ {
            n = $0; sub(/.*\(/, "", n); sub(/ s\)$/, "", n)
            kernel += n; pending = n; next
        }
        /^hil: [A-Za-z0-9_-]+: [0-9]+ s$/ {
            name = $2; sub(/:$/, "", name)
            n = $3 - pending; if (n < 0) n = 0
            roots[++count] = name; secs[count] = n; used += n; pending = 0
        }
        END {
            printf "hil kernel\t%d\t\n", kernel; used += kernel
            for (i = 1; i <= count; i++) printf "hil %s\t%d\t\n", roots[i], secs[i]
            rest = whole - used; if (rest < 0) rest = 0
            printf "hil (rest)\t%d\t%s\n", rest, note
        }' "$3" >> "$rows"
}

finish_interrupted() {
    trap - INT TERM
    if [ -n "$current" ]; then
        t=$(( $(date +%s) - started ))
        if [ "$current" = hil ] && [ -f "$tmp/hil.log" ]; then hil_rows "$t" "interrupted" "$tmp/hil.log"
        else row "$current" "$t" "interrupted"; fi
    fi
    table
    rm -rf "$tmp"
    exit 130
}
trap finish_interrupted INT TERM

while [ $# -gt 0 ]; do
    current=$1; cmd=$2; shift 2
    echo "$cmd"
    started=$(date +%s)
    if [ "$current" = hil ]; then
        : > "$tmp/hil.log"
        { sh -c "$cmd"; echo $? > "$tmp/rc"; } | tee "$tmp/hil.log"
        rc=$(cat "$tmp/rc" 2>/dev/null || echo 1)
    else
        sh -c "$cmd"
        rc=$?
    fi
    t=$(( $(date +%s) - started ))
    note=""; [ "$rc" -eq 0 ] || note="FAILED (exit $rc)"
    if [ "$current" = hil ]; then hil_rows "$t" "$note" "$tmp/hil.log"; else row "$current" "$t" "$note"; fi
    if [ "$rc" -ne 0 ]; then
        failed=$current; current=""
        table
        rest=""
        while [ $# -gt 0 ]; do rest="$rest${rest:+, }$1"; shift 2; done
        echo "make test: $failed failed (exit $rc)${rest:+; not run: $rest}"
        rm -rf "$tmp"
        exit "$rc"
    fi
done
current=""
table
rm -rf "$tmp"
