#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Prints the path of a moto S3 server (moto's server mode, from PyPI) for the upload tests,
# installing it first into a venv cached at $SHUTTER_MOTO_CACHE (default
# /var/cache/shutter-moto) when missing. Called by `deploy/install-deps.sh --test`'s caller,
# `make test`; the tests skip S3 with a message naming this script when it is not there.
# `.complete` is written last: an install stopped halfway starts again.
set -eu
version=5.0.28
cache=${SHUTTER_MOTO_CACHE:-/var/cache/shutter-moto}
venv=$cache/venv-$version
if [ ! -f "$venv/.complete" ]; then
    sh "$(dirname "$0")/../install-deps.sh" python3-venv >&2
    echo "s3-server: installing moto $version into $venv (from PyPI)" >&2
    rm -rf "$venv"
    mkdir -p "$cache"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "moto[server]==$version" >&2
    touch "$venv/.complete"
fi
echo "$venv/bin/moto_server"
