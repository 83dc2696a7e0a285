// SPDX-License-Identifier: BSD-2-Clause
#include "shutter_version.h"

// version_stamp.h is written by deploy/version-stamp.sh (make) and ignored by git; it
// defines SHUTTER_VERSION_STAMP. The script touches this file when it changes the stamp, so
// the build recompiles it even where the header did not exist at the last build.
#if __has_include("version_stamp.h")
#include "version_stamp.h"
#endif
#ifndef SHUTTER_VERSION_STAMP
#define SHUTTER_VERSION_STAMP 0
#endif

const char *shutter_version_stamp(void) { return SHUTTER_VERSION_STAMP; }
