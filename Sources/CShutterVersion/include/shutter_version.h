// SPDX-License-Identifier: BSD-2-Clause
#ifndef SHUTTER_VERSION_H
#define SHUTTER_VERSION_H

/// The version `make` stamped (deploy/version-stamp.sh), or NULL when nothing did (`swift
/// build` alone in a fresh clone). The stamp lives in a C file, not in Swift, so a new
/// version (every commit makes one) recompiles one C file and relinks: no Swift module
/// depends on it changing (under qemu-user a Swift rebuild takes ~35 min).
const char *shutter_version_stamp(void);

#endif
