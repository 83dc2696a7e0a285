// SPDX-License-Identifier: BSD-2-Clause
#include <alsa/asoundlib.h>
