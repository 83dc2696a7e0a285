#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Checks deploy/test-stages.sh (make test's stage table) with fake stages: every stage runs
# in order, each printed first, and the table names each with its seconds and the total;
# the hil stage is split by run.sh's lines (kernel, each root less its kernel, the rest); the
# first failing stage ends the run with its status, the table showing what ran and what did
# not; a hil stage that fails keeps the rows it printed; an interrupted run still prints its
# table; make -n runs nothing; a wrong argument list is refused. About a second.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "test-test-stages: ok   $1"; }
fail() { echo "test-test-stages: FAIL $1"; failed=1; }
# has FILE PATTERN WHAT: a line of FILE matches the extended regular expression
has() { if grep -Eq -- "$2" "$1"; then ok "$3"; else fail "$3: no line matching '$2' in:"; sed 's/^/    /' "$1"; fi; }
hasnt() { if grep -Eq -- "$2" "$1"; then fail "$3: a line matches '$2'"; sed 's/^/    /' "$1"; else ok "$3"; fi; }
run() { out=$1; shift; sh "$here/test-stages.sh" "$@" > "$tmp/$out" 2>&1; echo $? > "$tmp/$out.rc"; }
rc() { cat "$tmp/$1.rc"; }

# Every stage passes; the hil stage's lines split it.
hil_lines='printf "hil: kernel /k/bzImage (3 s)\nPASS probe (1 s): fine\nhil: bookworm: 10 s\nhil: kernel /k/bzImage (0 s)\nhil: trixie root /r (4 s)\nhil: trixie: release shutterd built (5 s)\nhil: trixie: 20 s\n2 passed, 0 failed\n"'
run pass "deps/compat" "true" "build-tests" "sleep 1" "check-scripts" "echo checked" "hil" "$hil_lines"
[ "$(rc pass)" = 0 ] && ok "all pass: exit 0" || fail "all pass: exit $(rc pass)"
has "$tmp/pass" '^sleep 1$' "each stage's command is printed first"
has "$tmp/pass" '^checked$' "a stage's output is shown"
has "$tmp/pass" '^PASS probe \(1 s\): fine$' "the hil stage's output is shown (through tee)"
has "$tmp/pass" '^make test: seconds per stage$' "the table's heading"
has "$tmp/pass" '^  deps/compat +0 s$' "a quick stage: 0 s"
has "$tmp/pass" '^  build-tests +[12] s$' "a stage of a second: its seconds"
has "$tmp/pass" '^  hil kernel +3 s$' "hil kernel: the kernels' seconds (3 + 0)"
has "$tmp/pass" '^  hil bookworm +7 s$' "hil bookworm: its run less its kernel (10 - 3)"
has "$tmp/pass" '^  hil trixie +20 s$' "hil trixie: its run (its kernel was cached); its other lines are not roots"
has "$tmp/pass" '^  hil \(rest\) +0 s$' "hil (rest): the stage less its rows, never below 0"
has "$tmp/pass" '^  total +[12] s$' "the total"
order=$(sed -n 's/^  \([a-z/ ()-]*[a-z)]\) *[0-9]* s.*/\1/p' "$tmp/pass" | tr '\n' ',')
[ "$order" = "deps/compat,build-tests,check-scripts,hil kernel,hil bookworm,hil trixie,hil (rest),total," ] \
    && ok "rows in the order the stages ran" || fail "rows in the order the stages ran: $order"

# The second stage fails: the third never runs; the table, then its status.
run fails "a" "true" "b" "echo half; exit 3" "c" "echo never" "hil" "echo never either"
[ "$(rc fails)" = 3 ] && ok "a failing stage's status is the exit status" || fail "exit $(rc fails), want 3"
has "$tmp/fails" '^  b +0 s  FAILED \(exit 3\)$' "the failing stage is marked"
hasnt "$tmp/fails" 'never' "no stage after the failing one runs"
has "$tmp/fails" '^  total +0 s$' "the total of what ran"
has "$tmp/fails" '^make test: b failed \(exit 3\); not run: c, hil$' "what failed and what did not run"

# The hil stage fails after its kernel: its rows so far, the failure on the last.
run hilfail "hil" 'printf "hil: kernel /k (2 s)\nFAIL probe (1 s): no camera\n"; exit 1'
[ "$(rc hilfail)" = 1 ] && ok "a failing hil stage: exit 1" || fail "a failing hil stage: exit $(rc hilfail)"
has "$tmp/hilfail" '^  hil kernel +2 s$' "its kernel row"
has "$tmp/hilfail" '^  hil \(rest\) +0 s  FAILED \(exit 1\)$' "the failure on its last row"

# Interrupted (the stage sends SIGTERM to the run, as a Ctrl-C or a kill reaches it): the
# run stops there and prints its table all the same.
run int "a" "true" "slow" 'kill -TERM $PPID' "c" "echo never"
[ "$(rc int)" = 130 ] && ok "interrupted: exit 130" || fail "interrupted: exit $(rc int)"
has "$tmp/int" '^  slow +[0-9]+ s  interrupted$' "the interrupted stage is in the table"
hasnt "$tmp/int" 'never' "nothing runs after the interruption"

# make -n: the commands printed, none run.
MAKEFLAGS="n --no-print-directory" sh "$here/test-stages.sh" "a" "echo ran > $tmp/ran" "b" "true" > "$tmp/dry" 2>&1
[ ! -e "$tmp/ran" ] && ok "make -n: nothing runs" || fail "make -n: a stage ran"
has "$tmp/dry" '^echo ran > ' "make -n: each command printed"
MAKEFLAGS="--no-print-directory" sh "$here/test-stages.sh" "a" "echo ran > $tmp/ran" > /dev/null 2>&1
[ -e "$tmp/ran" ] && ok "a long option's n is no dry run" || fail "MAKEFLAGS without -n: the stage did not run"

# A wrong argument list.
run usage "only-a-name"
[ "$(rc usage)" = 64 ] && ok "an odd argument list is refused (64)" || fail "an odd argument list: exit $(rc usage)"
run none
[ "$(rc none)" = 64 ] && ok "no stage is refused (64)" || fail "no stage: exit $(rc none)"

exit "$failed"
