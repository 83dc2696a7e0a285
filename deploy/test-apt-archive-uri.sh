#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Checks deploy/apt-archive-uri.sh on sample apt configurations (deb822 .sources,
# one-line sources.list and .list files, apt lists naming the Debian origin), then that
# no Debian package host is named anywhere in the repository. Hosts here are *.example.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
# expect WANT NAME: run the script on $tmp/etc + $tmp/lists for suite "bookworm".
expect() {
    got=$(APT_ETC="$tmp/etc" APT_LISTS="$tmp/lists" CODENAME=bookworm DEBIAN_ARCHIVE= \
        sh "$here/apt-archive-uri.sh" 2>"$tmp/err") || got="(exit $?: $(cat "$tmp/err"))"
    if [ "$got" = "$1" ]; then echo "test-apt-archive-uri: ok   $2"
    else echo "test-apt-archive-uri: FAIL $2: got '$got', want '$1'"; failed=1; fi
}
fresh() { rm -rf "$tmp/etc" "$tmp/lists"; mkdir -p "$tmp/etc/sources.list.d" "$tmp/lists"; }

fresh  # deb822, as Debian 12+ installs it: security and updates first, a comment line.
cat > "$tmp/etc/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
# a comment inside the stanza
URIs: http://mirror.example/debian/ http://second.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
expect http://mirror.example/debian "deb822: the suite's first URI, not -security"

fresh  # deb822: a disabled stanza and a deb-src-only stanza are skipped.
cat > "$tmp/etc/sources.list.d/a.sources" <<'EOF'
Enabled: no
Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm
Components: main
EOF
cat > "$tmp/etc/sources.list.d/b.sources" <<'EOF'
Types: deb
URIs: https://secure.example/debian
Suites:
 bookworm
Components: main
EOF
expect https://secure.example/debian "deb822: Enabled: no and deb-src skipped, folded Suites read"

fresh  # one-line format with options, comments, cdrom first.
cat > "$tmp/etc/sources.list" <<'EOF'
# deb http://commented.example/debian bookworm main
deb cdrom:[Debian GNU/Linux 12]/ bookworm main
deb-src http://src.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://oneline.example/debian bookworm main  # trailing
deb http://oneline.example/debian-security bookworm-security main
EOF
expect http://oneline.example/debian "one-line: options, comments, cdrom and deb-src skipped"

fresh  # sources.list comes before sources.list.d, as in apt.
echo "deb http://first.example/debian bookworm main" > "$tmp/etc/sources.list"
echo "deb http://later.example/debian bookworm main" > "$tmp/etc/sources.list.d/x.list"
expect http://first.example/debian "one-line: sources.list first"

fresh  # Raspberry Pi OS style: a vendor archive with the same suite listed first; apt's
# lists say which one is Debian's.
echo "deb http://vendor.example/debian/ bookworm main" > "$tmp/etc/sources.list.d/00vendor.list"
echo "deb http://mirror.example/debian bookworm main" > "$tmp/etc/sources.list.d/debian.list"
printf 'Origin: Vendor\nSuite: bookworm\n' > "$tmp/lists/vendor.example_debian_dists_bookworm_InRelease"
printf 'Origin: Debian\nSuite: bookworm\n' > "$tmp/lists/mirror.example_debian_dists_bookworm_InRelease"
expect http://mirror.example/debian "apt lists: the archive whose Origin is Debian wins"

fresh
echo "deb http://mirror.example/debian bookworm-backports main" > "$tmp/etc/sources.list.d/x.list"
expect "(exit 1: apt-archive-uri: no 'deb' source for suite bookworm in $tmp/etc: set DEBIAN_ARCHIVE)" \
    "no source for the release: an error naming the override"

got=$(DEBIAN_ARCHIVE=http://override.example/debian sh "$here/apt-archive-uri.sh")
[ "$got" = http://override.example/debian ] && echo "test-apt-archive-uri: ok   DEBIAN_ARCHIVE overrides" \
    || { echo "test-apt-archive-uri: FAIL DEBIAN_ARCHIVE: got '$got'"; failed=1; }

# No package host named in the repository (issue 10): the archive always comes from apt.
if command -v git >/dev/null && git -C "$here/.." rev-parse --git-dir >/dev/null 2>&1; then
    hits=$(git -C "$here/.." grep -nE 'deb\.debian\.org|ftp\.[a-z]+\.debian|(archive|ports)\.ubuntu\.com|archive\.raspberrypi' || true)
    if [ -z "$hits" ]; then echo "test-apt-archive-uri: ok   no package host named in the repository"
    else echo "test-apt-archive-uri: FAIL package hosts named in the repository:"; echo "$hits" | sed 's/^/    /'; failed=1; fi
fi
exit "$failed"
