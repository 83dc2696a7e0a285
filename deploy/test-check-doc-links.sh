#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Proves deploy/check-doc-links.py can fail: a small tree of Markdown files whose links
# all resolve passes (duplicate headings' -1 anchors, punctuation in headings, a link in a
# code block that is no link); each deliberately broken file fails, exit 1, naming its
# file:line and the link. Under a second.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
cat > "$tmp/README.md" <<'MD'
# Sample

See [the config](docs/config.md#the-key-table-videosizes), [again](docs/config.md#notes-1),
[top](#sample), [licence](LICENSE) and [the folder](docs/).

```sh
echo "[not a link](missing.md)"
```
MD
cat > "$tmp/docs/config.md" <<'MD'
# Config

## The key table (`video.sizes`)

## Notes

## Notes

Back to the [README](../README.md#sample).
MD
: > "$tmp/LICENSE"

failed=0
expect() { # expect RC WHAT FILE... ; with RC 1, also the line the output must contain
    rc_want=$1; what=$2; shift 2
    want=""
    if [ "$rc_want" = 1 ]; then want=$1; shift; fi
    rc=0
    "$PY" "$here/check-doc-links.py" "$tmp" "$@" > "$tmp/out.log" 2>&1 || rc=$?
    if [ "$rc" != "$rc_want" ]; then
        echo "test-check-doc-links: FAIL $what: exit $rc, expected $rc_want"; sed 's/^/    /' "$tmp/out.log"; failed=1
    elif [ -n "$want" ] && ! grep -qF "$want" "$tmp/out.log"; then
        echo "test-check-doc-links: FAIL $what: output lacks '$want'"; sed 's/^/    /' "$tmp/out.log"; failed=1
    else
        echo "test-check-doc-links: ok   $what (exit $rc)"
    fi
}
expect 0 "links that resolve pass" "$tmp/README.md" "$tmp/docs/config.md"

printf '# Broken\n\nA [missing file](docs/nowhere.md).\n' > "$tmp/missing-file.md"
expect 1 "a link to a missing file fails" "missing-file.md:3: broken link docs/nowhere.md" "$tmp/missing-file.md"

printf '# Broken\n\ntext\n\nA [bad anchor](docs/config.md#no-such-heading).\n' > "$tmp/bad-anchor.md"
expect 1 "an anchor no heading has fails" "bad-anchor.md:5: broken link docs/config.md#no-such-heading" "$tmp/bad-anchor.md"

printf '# Broken\n\n[here](#broken-1) is no second heading.\n' > "$tmp/self-anchor.md"
expect 1 "a same-file anchor that does not exist fails" "self-anchor.md:3: broken link #broken-1" "$tmp/self-anchor.md"

printf '# Broken\n\n[keeps the dot](docs/config.md#the-key-table-video.sizes)\n' > "$tmp/punct.md"
expect 1 "an anchor with punctuation GitHub drops fails" "punct.md:3: broken link docs/config.md#the-key-table-video.sizes" "$tmp/punct.md"

[ "$failed" = 0 ] || { echo "test-check-doc-links: FAIL" >&2; exit 1; }
echo "test-check-doc-links: ok, the checker passes good links and fails broken ones"
