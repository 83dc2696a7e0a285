/*
 * peer-clock: the side-by-side run's clock in the VM (CLOCK_MONOTONIC, the clock of
 * libcamera's virtual camera's SensorTimestamp), in milliseconds with 3 decimals.
 *   peer-clock now                   prints the time
 *   peer-clock kill SIG PID          prints the time, then sends SIG (a number) to PID
 *   peer-clock watch DIR             prints "ms EVENT NAME" for every IN_CLOSE_WRITE and
 *                                    IN_MOVED_TO in DIR, a line each, until killed
 *   peer-clock stat PID              prints "utime_s stime_s vmhwm_kib" of PID (/proc)
 * A shell's `date` has 1 s steps and /proc/uptime 10 ms; this is exact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int watch(const char *dir)
{
	int fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		fprintf(stderr, "peer-clock: watch %s: %s\n", dir, strerror(errno));
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%.3f WATCHING %s\n", now_ms(), dir);
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		double t = now_ms();
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			printf("%.3f %s %s\n", t, (e->mask & IN_MOVED_TO) ? "IN_MOVED_TO" : "IN_CLOSE_WRITE",
			       e->len ? e->name : "");
			p += sizeof *e + e->len;
		}
	}
}

static int stat_pid(const char *pid)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%s/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f || !fgets(line, sizeof line, f)) {
		fprintf(stderr, "peer-clock: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fclose(f);
	/* Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15. */
	char *p = strrchr(line, ')');
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 1;
	long hz = sysconf(_SC_CLK_TCK);
	long hwm = -1;
	snprintf(path, sizeof path, "/proc/%s/status", pid);
	if ((f = fopen(path, "r"))) {
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "VmHWM:", 6))
				hwm = strtol(line + 6, NULL, 10);
		fclose(f);
	}
	printf("%.2f %.2f %ld\n", (double)ut / hz, (double)st / hz, hwm);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "now")) {
		printf("%.3f\n", now_ms());
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "kill")) {
		int sig = atoi(argv[2]);
		pid_t pid = (pid_t)atoi(argv[3]);
		double t = now_ms();
		if (kill(pid, sig) < 0) {
			fprintf(stderr, "peer-clock: kill %d %d: %s\n", sig, (int)pid, strerror(errno));
			return 1;
		}
		printf("%.3f\n", t);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "watch"))
		return watch(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "stat"))
		return stat_pid(argv[2]);
	fprintf(stderr, "usage: peer-clock now | kill SIG PID | watch DIR | stat PID\n");
	return 64;
}
