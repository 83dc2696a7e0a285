#include <turbojpeg.h>
#include "nv12_strips.h"
