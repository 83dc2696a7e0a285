#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages `make ha-test` needs, when missing: python3-venv (the venv
# Home Assistant is installed into from PyPI; Debian's python3 has no ensurepip without it)
# and mosquitto with its clients (the broker between shutterd and Home Assistant).
# Kept apart from the main list like deploy/deb/install-deps.sh.
set -eu
exec sh "$(dirname "$0")/../install-deps.sh" python3-venv mosquitto mosquitto-clients
