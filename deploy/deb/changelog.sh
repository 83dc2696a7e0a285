#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The package's changelog (Debian format) from CHANGELOG.md (Keep a Changelog), so it
# says what changed instead of a fresh "built by make deb" entry at every build:
#   changelog.sh CHANGELOG.md VERSION "MAINTAINER" EPOCH > changelog
# One entry per "## [X]" section, newest first. "[Unreleased]", and every released
# section whose version is not older than VERSION (0.3.0 while building the untagged
# 0.3.0~git388.g0c13598, which already contains it), go into the top entry, VERSION.
# Each "### Fixed"-style subsection becomes "  [ Fixed ]", each top-level "- " item one
# "  * " item (continuation lines joined), Markdown links reduced to their text, bold
# and backticks dropped, wrapped at 78 columns. Dates: a section's "## [X] - YYYY-MM-DD",
# else EPOCH (SOURCE_DATE_EPOCH), in UTC: the same input gives the same bytes.
# POSIX sh and awk only: it also runs in the arm64 build root (deploy/arm64/run.sh).
set -eu
md=$1; version=$2; maintainer=$3; epoch=$4
# Sections as "VERSION<TAB>DATE" lines, in file order.
sections=$(awk '/^## \[/ { v = $0; sub(/^## \[/, "", v); sub(/\].*/, "", v)
    d = ""; if (match($0, /[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/)) d = substr($0, RSTART, RLENGTH)
    print v "\t" d }' "$md")
[ -n "$sections" ] || { echo "changelog: FAIL no \"## [X]\" sections in $md" >&2; exit 1; }
rfc() { LC_ALL=C date -u -R -d "$1"; }
top_date=$(rfc "@$epoch")
# Which sections fold into the top entry.
top="Unreleased"
rest=""
tab=$(printf '\t')
while IFS="$tab" read -r v d; do
    [ "$v" = Unreleased ] && continue
    if dpkg --compare-versions "$v" ge "$version"; then top="$top $v"; else rest="$rest $v"; fi
done <<EOF
$sections
EOF
items() { # items SECTION...: the Debian lines of those sections
    awk -v want=" $* " '
    function flush() {
        if (item == "") return
        t = item; item = ""
        while (match(t, /\[[^]]*\]\([^)]*\)/)) {
            m = substr(t, RSTART, RLENGTH); sub(/\]\(.*/, "", m); sub(/^\[/, "", m)
            t = substr(t, 1, RSTART - 1) m substr(t, RSTART + RLENGTH)
        }
        gsub(/\*\*/, "", t); gsub(/`/, "", t); gsub(/  +/, " ", t)
        # wrap: "  * " then "    " continuation, 78 columns
        n = split(t, w, " "); line = "  *"; width = 3
        for (i = 1; i <= n; i++) {
            if (width + 1 + length(w[i]) > 78 && width > 4) { print line; line = "   "; width = 3 }
            line = line " " w[i]; width += 1 + length(w[i])
        }
        print line
    }
    /^## \[/ { flush(); v = $0; sub(/^## \[/, "", v); sub(/\].*/, "", v); on = index(want, " " v " ") > 0; next }
    !on { next }
    /^### / { flush(); h = $0; sub(/^### +/, "", h); if (printed) print ""; print "  [ " h " ]"; printed = 1; next }
    /^- / { flush(); item = substr($0, 3); next }
    /^[ \t]+[^ \t]/ && item != "" { s = $0; sub(/^[ \t]+/, "", s); item = item " " s; next }
    /^[^ \t-]/ && item != "" { item = item " " $0; next }
    /^$/ { flush(); next }
    END { flush() }
    ' "$md"
}
entry() { # entry VERSION DATE SECTION...
    v=$1; d=$2; shift 2
    echo "shutter ($v) unstable; urgency=medium"
    echo
    body=$(items "$@")
    if [ -n "$body" ]; then echo "$body"; else echo "  * No changes recorded in CHANGELOG.md."; fi
    echo
    echo " -- $maintainer  $d"
}
entry "$version" "$top_date" $top
for v in $rest; do
    d=$(printf '%s\n' "$sections" | awk -F "$tab" -v v="$v" '$1 == v { print $2; exit }')
    if [ -n "$d" ]; then d=$(rfc "$d 00:00:00"); else d=$top_date; fi
    echo
    entry "$v" "$d" "$v"
done
