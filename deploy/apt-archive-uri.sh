#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Prints the Debian archive URI this machine's apt already uses (no package host is
# named in the repository). Used by deploy/check-swift60.sh, deploy/compat/
# fetch-trixie-headers.sh and deploy/arm64/build-root.sh.
#
# Reads, in apt's order, /etc/apt/sources.list and /etc/apt/sources.list.d/*.list
# (one-line format) and *.sources (deb822), skipping disabled stanzas, `deb-src`,
# and schemes debootstrap cannot use (cdrom:, file:, mirror+...:). Of the `deb` entries
# whose suite is the host's release (VERSION_CODENAME, e.g. bookworm: not
# bookworm-security or -updates), the first whose Release file in apt's lists says
# `Origin: Debian` wins (so a Raspberry Pi OS or vendor archive with the same suite name
# is passed over); with no lists yet, the first such entry.
#
# Overrides: DEBIAN_ARCHIVE=URI (printed as is). For the test (deploy/test-apt-archive-uri.sh):
# APT_ETC (default /etc/apt), APT_LISTS (default /var/lib/apt/lists), CODENAME.
set -eu
if [ -n "${DEBIAN_ARCHIVE:-}" ]; then echo "$DEBIAN_ARCHIVE"; exit 0; fi
etc=${APT_ETC:-/etc/apt}
lists=${APT_LISTS:-/var/lib/apt/lists}
if [ -z "${CODENAME:-}" ]; then
    CODENAME=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
fi
[ -n "$CODENAME" ] || { echo "apt-archive-uri: no VERSION_CODENAME in /etc/os-release: set DEBIAN_ARCHIVE" >&2; exit 1; }

files=""
[ -f "$etc/sources.list" ] && files="$etc/sources.list"
for f in "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources; do
    [ -f "$f" ] && files="$files $f"
done
# One "URI SUITE" line per (first URI, suite) of every enabled deb entry, in file order.
# shellcheck disable=SC2086
candidates=$(awk '
    function flush(   i, n, s) {
        if (types ~ /(^| )deb( |$)/ && enabled != "no" && uri != "") {
            n = split(suites, s, " ")
            for (i = 1; i <= n; i++) print uri, s[i]
        }
        types = ""; uri = ""; suites = ""; enabled = ""; field = ""
    }
    FNR == 1 { flush(); deb822 = (FILENAME ~ /\.sources$/) }
    deb822 {
        if ($0 ~ /^[ \t]*#/) next
        if ($0 ~ /^[ \t]*$/) { flush(); next }
        if ($0 ~ /^[ \t]/) { if (field == "suites") suites = suites " " $1; next }
        key = tolower($1); sub(/:$/, "", key); field = key
        val = $0; sub(/^[^:]*:[ \t]*/, "", val)
        if (key == "types") types = val
        else if (key == "uris") { split(val, u, /[ \t]+/); uri = u[1] }
        else if (key == "suites") suites = val
        else if (key == "enabled") enabled = tolower(val)
        next
    }
    {
        sub(/#.*/, "")
        if ($1 != "deb") next
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if (i + 1 <= NF) print $i, $(i + 1)
    }
    END { flush() }
' $files /dev/null | awk -v c="$CODENAME" '$2 == c || $2 == c "/" { print $1 }' |
    grep -vE '^(cdrom|file|copy|mirror[+a-z]*):' || true)

[ -n "$candidates" ] || { echo "apt-archive-uri: no 'deb' source for suite $CODENAME in $etc: set DEBIAN_ARCHIVE" >&2; exit 1; }
for uri in $candidates; do
    # apt's list file name: the URI without its scheme, "/" as "_".
    base=$(echo "${uri%/}" | sed -e 's|^[a-z+]*://||' -e 's|^[^@/]*@||' -e 's|/|_|g')
    for rel in "$lists/${base}_dists_${CODENAME}_InRelease" "$lists/${base}_dists_${CODENAME}_Release"; do
        if [ -f "$rel" ] && grep -q '^Origin: Debian$' "$rel"; then echo "${uri%/}"; exit 0; fi
    done
done
echo "$candidates" | head -n1 | sed 's|/$||'
