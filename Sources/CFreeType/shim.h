// SPDX-License-Identifier: BSD-2-Clause
#include <ft2build.h>
#include FT_FREETYPE_H
