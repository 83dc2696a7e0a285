// SPDX-License-Identifier: BSD-2-Clause
/* One plain C interface over libgpiod v1 (Debian bookworm, 1.6.x) and v2 (trixie,
 * 2.x), so Swift never sees either library's types. Every call returns 0 or a
 * count on success and -errno on failure; nothing here aborts. */
#ifndef SHUTTER_CGPIODSHIM_H
#define SHUTTER_CGPIODSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One GPIO chip as found under /dev. `open_errno` is 0 when the chip could be
 * opened and read, else the errno (EACCES: not in the `gpio` group). */
typedef struct shutter_gpio_chip {
    char path[64];
    char name[32];
    char label[64];
    uint32_t num_lines;
    int32_t open_errno;
} shutter_gpio_chip;

/* One edge with the kernel's CLOCK_MONOTONIC timestamp. `rising` is the raw
 * electrical level change (1 = low to high); active-low is applied by the caller. */
typedef struct shutter_gpio_edge {
    uint64_t timestamp_ns;
    int32_t rising;
} shutter_gpio_edge;

typedef struct shutter_gpio_input shutter_gpio_input;
typedef struct shutter_gpio_output shutter_gpio_output;

/* 1 or 2: the libgpiod API this shim was compiled against. */
int shutter_gpio_api_major(void);
/* The runtime library's version string ("1.6.3", "2.2.1"). */
const char *shutter_gpio_library_version(void);

/* Lists the /dev/gpiochip* devices, sorted by path, into `out` (up to `max`).
 * Returns the number found (may exceed `max`), or -errno when /dev is unreadable. */
int shutter_gpio_list_chips(shutter_gpio_chip *out, int max);

/* Finds a line. `chip_label` (may be NULL or "") restricts the search to chips
 * with that label; `line_name` (may be NULL or "") selects by line name, else
 * `offset` is used. On success writes the chip path and line offset.
 * -ENODEV: no chip with that label; -ENOENT: no such line; -EACCES: permission. */
int shutter_gpio_find_line(const char *chip_label, const char *line_name, uint32_t offset,
                           char *path_out, size_t path_len, uint32_t *offset_out);

/* Line bias for an input (`bias` below). 0 and 1 are what an older caller's `pull_up`
 * flag meant (as-is, pull-up). */
enum {
    SHUTTER_GPIO_BIAS_AS_IS = 0,
    SHUTTER_GPIO_BIAS_PULL_UP = 1,
    SHUTTER_GPIO_BIAS_PULL_DOWN = 2,
    SHUTTER_GPIO_BIAS_DISABLED = 3,
};

/* Requests `offset` on the chip at `path` as an input with both edges reported,
 * monotonic kernel timestamps and the `bias` asked (SHUTTER_GPIO_BIAS_*; -EINVAL for another). No kernel debounce, on
 * either API: the kernel decides it on a worker that reads the line when it gets to run,
 * so a press is lost whole when that is after the release (a busy CPU), and its edge is
 * stamped with that late time. The service's stability filter debounces on the edges'
 * own timestamps instead.
 * -EBUSY: the line is used by another consumer. */
int shutter_gpio_input_open(const char *path, uint32_t offset, const char *consumer,
                            int bias, shutter_gpio_input **out);
/* The fd that becomes readable when edges are queued. */
int shutter_gpio_input_fd(const shutter_gpio_input *input);
/* Reads up to `max` queued edges; 0 when none is queued (the fd is non-blocking). */
int shutter_gpio_input_read(shutter_gpio_input *input, shutter_gpio_edge *out, int max);
/* The current raw level (0 or 1). */
int shutter_gpio_input_value(shutter_gpio_input *input);
void shutter_gpio_input_close(shutter_gpio_input *input);

/* Requests `offset` as an output driven to the raw level `initial` (0 or 1). */
int shutter_gpio_output_open(const char *path, uint32_t offset, const char *consumer,
                             int initial, shutter_gpio_output **out);
int shutter_gpio_output_set(shutter_gpio_output *output, int value);
void shutter_gpio_output_close(shutter_gpio_output *output);

#ifdef __cplusplus
}
#endif

#endif
