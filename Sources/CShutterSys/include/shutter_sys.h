// SPDX-License-Identifier: BSD-2-Clause
/*
 * The few kernel and C library calls that Swift's Glibc module does not
 * export, behind a plain C header: an exclusive rename, the kernel's clock
 * synchronisation state, malloc_trim and a V4L2 control. Used by ShutterStorage
 * and ShutterHardware (the pure core, ShutterCore, imports no C module). Calls that can fail return 0 or
 * -errno and retry EINTR themselves.
 */
#ifndef SHUTTER_SYS_H
#define SHUTTER_SYS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Renames `from` to `to` only if `to` does not exist; -EEXIST otherwise, with
 * `from` left in place. renameat2(RENAME_NOREPLACE) first (atomic); where the
 * kernel or the file system refuses the flag (EINVAL, ENOSYS, EOPNOTSUPP), the
 * fallback `shutter_link_noreplace`. */
int shutter_rename_noreplace(const char *from, const char *to);

/* link(from, to) then unlink(from): exclusive as well (link never replaces),
 * for file systems without RENAME_NOREPLACE. -EEXIST when `to` exists. */
int shutter_link_noreplace(const char *from, const char *to);

/* 1 when the kernel's NTP state says the clock is synchronised (a read-only
 * adjtimex that does not return TIME_ERROR), else 0; also 0 when the call is
 * denied (systemd's ProtectClock= / SystemCallFilter= make it fail with EPERM). */
int shutter_clock_synchronised(void);

/* Hands the heap's free pages back to the kernel (glibc malloc_trim(0)). */
void shutter_release_free_memory(void);

/* At most `count` malloc arenas (glibc mallopt M_ARENA_MAX; its default is 8 per core):
 * every thread that allocates may otherwise get an arena of its own, whose freed pages
 * stay resident. */
void shutter_limit_malloc_arenas(int count);

/* Bytes malloc has handed out and not had back (glibc mallinfo2: arena blocks in use
 * plus mmapped blocks); -1 where the C library cannot tell. Independent of trimming. */
long long shutter_heap_in_use(void);

/* The V4L2 control id of a sensor's HDR mode (V4L2_CID_WIDE_DYNAMIC_RANGE):
 * the switch rpicam-apps' `--hdr sensor` sets on Camera Module 3's imx708. */
unsigned int shutter_v4l2_cid_wide_dynamic_range(void);

/* Sets the boolean V4L2 control `id` of the device node `path` (a sensor's
 * /dev/v4l-subdevN) to `value`, as rpicam-apps does before opening the camera:
 * 1 when it changed, 0 when it already had that value, -EINVAL when the
 * device has no such control, else -errno (open, query, get or set). */
int shutter_v4l2_set_control(const char *path, unsigned int id, int value);

// The idle I/O class for process `pid` (ioprio_set); -1 and errno on failure.
int shutter_ioprio_idle(int pid);

// The calling thread (not the process) at the lowest CPU priority (nice 19) and the idle
// I/O class: long background work (a time-lapse) that must never cost a capture. Threads it
// starts afterwards inherit both. 0, or -1 and errno when either was refused.
int shutter_lower_this_thread(void);

// The calling thread's nice value and I/O priority class (ioprio_get: 0 none, 1 realtime,
// 2 best-effort, 3 idle), for the log to say what it runs at. 0, or -1 and errno.
int shutter_this_thread_priority(int *nice_value, int *io_class);

// syncfs(2) of the file system holding `fd`; -1 and errno on failure.
int shutter_syncfs(int fd);

// execv(argv[0], argv) with PR_SET_PDEATHSIG SIGKILL set first; returns only on failure (-1, errno).
int shutter_exec_tied(char *const argv[]);

#ifdef __cplusplus
}
#endif

#endif
