#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The package's timestamp (https://reproducible-builds.org/specs/source-date-epoch/):
# SOURCE_DATE_EPOCH if set, else the last commit's time, else (a tarball without git)
# the VERSION file's modification time. Every date in the package comes from it: file
# mtimes (clamped), the changelog's dates, the man pages' headers, dpkg-deb's archive.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then echo "$SOURCE_DATE_EPOCH"; exit 0; fi
top=$(command -v git >/dev/null 2>&1 && git -C "$root" rev-parse --show-toplevel 2>/dev/null || true)
if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$root" && pwd -P)" ] &&
    t=$(git -C "$root" log -1 --format=%ct 2>/dev/null) && [ -n "$t" ]; then
    echo "$t"
else
    stat -c %Y "$root/VERSION"
fi
