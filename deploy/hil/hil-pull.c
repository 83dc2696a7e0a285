/* hil-pull: drives a gpio-sim input line with exact timing, which a shell under emulation
 * cannot (its sleeps are tens of ms). Usage: hil-pull PULL_FILE STEP...
 * where STEP is "down", "up" (writes pull-down / pull-up) or a number of milliseconds to wait
 * (fractions allowed), measured from the previous write with an absolute monotonic deadline.
 * Prints "<CLOCK_MONOTONIC ms with 3 decimals> <down|up>" per write, so the host knows the
 * edges' real spacing (the kernel timestamps the service sees are on the same clock).
 * A step "fifo" starves this CPU from then on: the process pins itself to the CPU it is on,
 * takes SCHED_FIFO priority 10 (above every ordinary task, kernel workers included, below
 * the kernel's interrupt threads at 50) and busy-waits instead of sleeping: what a CPU busy
 * with anything but interrupts looks like to work the kernel defers to a worker. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: hil-pull PULL_FILE [fifo] down|up|MS...\n");
        return 64;
    }
    int fd = open(argv[1], O_WRONLY);
    if (fd < 0) {
        fprintf(stderr, "hil-pull: open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    double stamps[256];
    int downs[256], n = 0, spin = 0;
    for (int i = 2; i < argc && n < 256; i++) {
        const char *s = argv[i];
        if (strcmp(s, "fifo") == 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(sched_getcpu(), &one);
            struct sched_param p = {.sched_priority = 10};
            if (sched_setaffinity(0, sizeof one, &one) < 0 || sched_setscheduler(0, SCHED_FIFO, &p) < 0) {
                fprintf(stderr, "hil-pull: fifo: %s\n", strerror(errno));
                return 1;
            }
            spin = 1;
        } else if (strcmp(s, "down") == 0 || strcmp(s, "up") == 0) {
            int down = s[0] == 'd';
            const char *v = down ? "pull-down" : "pull-up";
            if (write(fd, v, strlen(v)) < 0) {
                fprintf(stderr, "hil-pull: write %s: %s\n", v, strerror(errno));
                return 1;
            }
            clock_gettime(CLOCK_MONOTONIC, &deadline);
            stamps[n] = deadline.tv_sec * 1e3 + deadline.tv_nsec / 1e6;
            downs[n++] = down;
        } else {
            long ns = (long)(atof(s) * 1e6);
            deadline.tv_nsec += ns % 1000000000L;
            deadline.tv_sec += ns / 1000000000L + deadline.tv_nsec / 1000000000L;
            deadline.tv_nsec %= 1000000000L;
            if (spin) {
                struct timespec t;
                do clock_gettime(CLOCK_MONOTONIC, &t);
                while (t.tv_sec < deadline.tv_sec || (t.tv_sec == deadline.tv_sec && t.tv_nsec < deadline.tv_nsec));
            } else {
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {}
            }
        }
    }
    /* Printed after the sequence so stdio never delays a write. */
    for (int i = 0; i < n; i++) printf("%.3f %s\n", stamps[i], downs[i] ? "down" : "up");
    close(fd);
    return 0;
}
