// SPDX-License-Identifier: BSD-2-Clause
// See include/shutter_sys.h.
#define _GNU_SOURCE
#include "shutter_sys.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
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

void shutter_limit_malloc_arenas(int count)
{
#ifdef __GLIBC__
    mallopt(M_ARENA_MAX, count);
#else
    (void)count;
#endif
}

long long shutter_heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
#else
    return -1;
#endif
}

unsigned int shutter_v4l2_cid_wide_dynamic_range(void)
{
    return V4L2_CID_WIDE_DYNAMIC_RANGE;
}

static int xioctl(int fd, unsigned long request, void *arg)
{
    int r;
    do {
        r = ioctl(fd, request, arg);
    } while (r == -1 && errno == EINTR);
    return r == -1 ? -errno : 0;
}

int shutter_v4l2_set_control(const char *path, unsigned int id, int value)
{
    if (!path)
        return -EINVAL;
    int fd;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC); // as rpicam-apps opens it
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -errno;
    struct v4l2_queryctrl query;
    memset(&query, 0, sizeof query);
    query.id = id;
    int r = xioctl(fd, VIDIOC_QUERYCTRL, &query);
    if (r == 0 && (query.flags & V4L2_CTRL_FLAG_DISABLED))
        r = -EINVAL;
    struct v4l2_control ctrl = { .id = id, .value = 0 };
    if (r == 0)
        r = xioctl(fd, VIDIOC_G_CTRL, &ctrl);
    if (r == 0 && ctrl.value != value) {
        ctrl.value = value;
        r = xioctl(fd, VIDIOC_S_CTRL, &ctrl);
        if (r == 0)
            r = 1;
    }
    close(fd);
    return r;
}

// The idle I/O class for a process (uploads' rclone): ioprio_set has no glibc wrapper.
int shutter_ioprio_idle(int pid)
{
    return (int)syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, pid, 3 << 13 /* IOPRIO_CLASS_IDLE */);
}

int shutter_lower_this_thread(void)
{
    // Linux keeps the nice value per thread: PRIO_PROCESS with a thread id sets that thread's.
    pid_t tid = (pid_t)syscall(SYS_gettid);
    int a = setpriority(PRIO_PROCESS, (id_t)tid, 19);
    int b = shutter_ioprio_idle((int)tid);
    return (a == 0 && b == 0) ? 0 : -1;
}

int shutter_this_thread_priority(int *nice_value, int *io_class)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int n = getpriority(PRIO_PROCESS, (id_t)tid);
    if (n == -1 && errno != 0)
        return -1;
    long io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, (int)tid);
    if (io < 0)
        return -1;
    *nice_value = n;
    *io_class = (int)(io >> 13);
    return 0;
}

// syncfs(2): glibc declares it only under _GNU_SOURCE, which Swift's Glibc module does not set.
int shutter_syncfs(int fd)
{
    return syncfs(fd);
}

// Becomes argv[0] (execv), killed when the thread that started this process ends: the
// uploads' rclone daemon never outlives the connector, even one killed with SIGKILL.
int shutter_exec_tied(char *const argv[])
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return -1;
    if (getppid() == 1)  // the parent ended before the line above
        return -1;
    execv(argv[0], argv);
    return -1;
}
