// SPDX-License-Identifier: BSD-2-Clause
#include <libexif/exif-data.h>
#include <libexif/exif-loader.h>
#include <libexif/exif-utils.h>
