#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Proves deploy/check-man-pages.py can fail: fake shutterd and shutterctl whose --help is
# fixed text, copies of docs/man/ with a piece taken out or added, and the real schema.
# Each broken case must exit 1 and name what is missing. Needs scdoc; a second or two.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fake() { # fake DIR NAME HELP-TEXT: an executable printing HELP-TEXT for --help
    mkdir -p "$1"
    printf '#!/bin/sh\ncat <<"EOF"\n%s\nEOF\n' "$3" > "$1/$2"
    chmod +x "$1/$2"
}
D_HELP='usage: shutterd [--board NAME|auto] [--config FILE] [--storage DIR]
       shutterd --version'
C_HELP='usage: shutterctl [--socket PATH] COMMAND | --version
  status                 state
  tap | photo            take a photo
  hold SECONDS           record
  events [--count N]     events
  web-token add NAME --scope view|control | web-token list
  gestures FILE [--config CFG]
The socket is --socket PATH.'
fake "$tmp/good" shutterd "$D_HELP"
fake "$tmp/good" shutterctl "$C_HELP"
fake "$tmp/flag" shutterd "$D_HELP [--frobnicate]"
fake "$tmp/flag" shutterctl "$C_HELP"
fake "$tmp/cmd" shutterd "$D_HELP"
fake "$tmp/cmd" shutterctl "$C_HELP
  teleport WHERE         not a command Shutter has"
man() { # man NAME: a copy of docs/man/ in $tmp/man-NAME
    rm -rf "$tmp/man-$1" && cp -r "$repo/docs/man" "$tmp/man-$1"
}
man good
man nostorage
sed -i '/--storage/d' "$tmp/man-nostorage/shutterd.8.scd"
man nokey
sed -i '/audio\.channels/d' "$tmp/man-nokey/shutter.json.5.scd"
man nocontrolkey
sed -i '/camera\.image\.sharpness/d' "$tmp/man-nocontrolkey/shutter.json.5.scd"
man extrakey
printf '*video.frobnicate*\n\tDefault 1. A key the schema lacks.\n' >> "$tmp/man-extrakey/shutter.json.5.scd"
man nocmd
sed -i 's/^\*gestures\* _FILE_/gestures _FILE_/' "$tmp/man-nocmd/shutterctl.1.scd"
man syntax
printf '\nan _unclosed underline\n\nnext paragraph\n' >> "$tmp/man-syntax/shutterd.8.scd"

failed=0
expect() { # expect RC BIN MAN WHAT [TEXT the output must contain]
    rc=0
    python3 "$here/check-man-pages.py" --bin "$tmp/$2" --man "$tmp/man-$3" > "$tmp/out.log" 2>&1 || rc=$?
    if [ "$rc" != "$1" ]; then
        echo "test-check-man-pages: FAIL $4: exit $rc, expected $1"; sed 's/^/    /' "$tmp/out.log"; failed=1
    elif [ -n "${5:-}" ] && ! grep -qF -- "$5" "$tmp/out.log"; then
        echo "test-check-man-pages: FAIL $4: the output does not name $5"; sed 's/^/    /' "$tmp/out.log"; failed=1
    else
        echo "test-check-man-pages: ok   $4 (exit $rc)"
    fi
}
expect 0 good good "the pages as they are pass"
expect 1 flag good "an option the page lacks (--frobnicate) fails" "lacks the option --frobnicate"
expect 1 cmd good "a command the page lacks (teleport) fails" "lacks the command teleport"
expect 1 good nostorage "shutterd(8) without --storage fails" "lacks the option --storage"
expect 1 good nocmd "shutterctl(1) without the gestures term fails" "lacks the command gestures"
expect 1 good nokey "shutter.json(5) without audio.channels fails" "lacks the key audio.channels"
expect 1 good nocontrolkey "shutter.json(5) without camera.image.sharpness (a control table key) fails" \
    "lacks the key camera.image.sharpness"
expect 1 good extrakey "shutter.json(5) naming a key the schema lacks fails" "names video.frobnicate"
expect 1 good syntax "a page scdoc refuses fails" "scdoc refuses it"
exit "$failed"
