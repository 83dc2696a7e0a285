// SPDX-License-Identifier: BSD-2-Clause
#include <turbojpeg.h>
#include "nv12_strips.h"
#include "rows420.h"
