// See include/shutter_sys.h.
#define _GNU_SOURCE
#include "shutter_sys.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

_Static_assert(RENAME_NOREPLACE == 1, "RENAME_NOREPLACE is 1 in the kernel's uapi");

int shutter_link_noreplace(const char *from, const char *to)
{
    if (!from || !to)
        return -EINVAL;
    while (link(from, to) != 0) {
        if (errno != EINTR)
            return -errno;
    }
    unlink(from);
    return 0;
}

int shutter_rename_noreplace(const char *from, const char *to)
{
    if (!from || !to)
        return -EINVAL;
#ifdef SYS_renameat2
    // The raw system call: glibc's wrapper only exists from 2.28, the call from Linux 3.15.
    for (;;) {
        if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
            return 0;
        int e = errno;
        if (e == EINTR)
            continue;
        if (e == EINVAL || e == ENOSYS || e == EOPNOTSUPP || e == ENOTSUP)
            break; // the flag is unsupported here: fall back
        return -e;
    }
#endif
    return shutter_link_noreplace(from, to);
}

int shutter_clock_synchronised(void)
{
    struct timex tx;
    memset(&tx, 0, sizeof tx); // modes 0: read only
    int state = adjtimex(&tx);
    return state >= 0 && state != TIME_ERROR;
}

void shutter_release_free_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}
