// SPDX-License-Identifier: BSD-2-Clause
// libgpiod v1 and v2 behind one C interface (see include/CGPIODShim.h).
// `GPIOD_LINE_BULK_MAX_LINES` exists only in v1's header: that is the switch.
#define _GNU_SOURCE
#include "CGPIODShim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gpiod.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define SHUTTER_GPIOD_V1 1
#else
#define SHUTTER_GPIOD_V2 1
#endif

static int neg_errno(int fallback) {
    return -(errno != 0 ? errno : fallback);
}

/* An edge fd that reads 0 events instead of blocking when none is queued. The reader
 * watches it with a dispatch source and also drains it when asked to catch up, so an
 * event the source saw may already be read by then; a blocking read there waited for
 * the next press, holding the button's lock (and the service loop behind it). */
static int set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -errno;
    return 0;
}

/* The result of an edge read that found nothing queued is 0 edges, not an error. */
static int read_result(int n) {
    if (n >= 0) return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return neg_errno(EIO);
}

static void copy_string(char *dst, size_t len, const char *src) {
    if (len == 0) return;
    snprintf(dst, len, "%s", src ? src : "");
}

/* ------------------------------------------------------------------ chips */

typedef struct chip_facts {
    char name[32];
    char label[64];
    uint32_t num_lines;
} chip_facts;

#ifdef SHUTTER_GPIOD_V1
static int chip_read_facts(const char *path, chip_facts *f) {
    errno = 0;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return neg_errno(ENODEV);
    copy_string(f->name, sizeof f->name, gpiod_chip_name(chip));
    copy_string(f->label, sizeof f->label, gpiod_chip_label(chip));
    f->num_lines = gpiod_chip_num_lines(chip);
    gpiod_chip_close(chip);
    return 0;
}

static int chip_find_line_name(const char *path, const char *name, uint32_t *offset) {
    errno = 0;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return neg_errno(ENODEV);
    struct gpiod_line *line = gpiod_chip_find_line(chip, name);
    int rc = line ? 0 : -ENOENT;
    if (line) *offset = gpiod_line_offset(line);
    gpiod_chip_close(chip);
    return rc;
}
#else
static int chip_read_facts(const char *path, chip_facts *f) {
    errno = 0;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return neg_errno(ENODEV);
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) {
        int rc = neg_errno(EIO);
        gpiod_chip_close(chip);
        return rc;
    }
    copy_string(f->name, sizeof f->name, gpiod_chip_info_get_name(info));
    copy_string(f->label, sizeof f->label, gpiod_chip_info_get_label(info));
    f->num_lines = (uint32_t)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    gpiod_chip_close(chip);
    return 0;
}

static int chip_find_line_name(const char *path, const char *name, uint32_t *offset) {
    errno = 0;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return neg_errno(ENODEV);
    int off = gpiod_chip_get_line_offset_from_name(chip, name);
    gpiod_chip_close(chip);
    if (off < 0) return -ENOENT;
    *offset = (uint32_t)off;
    return 0;
}
#endif

int shutter_gpio_api_major(void) {
#ifdef SHUTTER_GPIOD_V1
    return 1;
#else
    return 2;
#endif
}

const char *shutter_gpio_library_version(void) {
#ifdef SHUTTER_GPIOD_V1
    return gpiod_version_string();
#else
    return gpiod_api_version();
#endif
}

static int compare_paths(const void *a, const void *b) {
    const shutter_gpio_chip *x = a, *y = b;
    // gpiochip2 before gpiochip10: compare by length first, then text.
    size_t lx = strlen(x->path), ly = strlen(y->path);
    if (lx != ly) return lx < ly ? -1 : 1;
    return strcmp(x->path, y->path);
}

// Paths of /dev/gpiochip* (the character devices; never assumed to be numbered
// from 0, nor the header's chip to be gpiochip0).
static int scan_chips(shutter_gpio_chip *out, int max) {
    DIR *dir = opendir("/dev");
    if (!dir) return neg_errno(ENOENT);
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        if (count < max) {
            memset(&out[count], 0, sizeof out[count]);
            snprintf(out[count].path, sizeof out[count].path, "/dev/%s", entry->d_name);
        }
        count++;
    }
    closedir(dir);
    int filled = count < max ? count : max;
    qsort(out, (size_t)filled, sizeof *out, compare_paths);
    return count;
}

int shutter_gpio_list_chips(shutter_gpio_chip *out, int max) {
    if (max < 0 || (max > 0 && !out)) return -EINVAL;
    int count = scan_chips(out, max);
    if (count < 0) return count;
    int filled = count < max ? count : max;
    for (int i = 0; i < filled; i++) {
        chip_facts f = {0};
        int rc = chip_read_facts(out[i].path, &f);
        if (rc < 0) {
            out[i].open_errno = -rc;
            continue;
        }
        memcpy(out[i].name, f.name, sizeof f.name);
        memcpy(out[i].label, f.label, sizeof f.label);
        out[i].num_lines = f.num_lines;
    }
    return count;
}

int shutter_gpio_find_line(const char *chip_label, const char *line_name, uint32_t offset,
                           char *path_out, size_t path_len, uint32_t *offset_out) {
    if (!path_out || !offset_out) return -EINVAL;
    bool by_label = chip_label && chip_label[0];
    bool by_name = line_name && line_name[0];
    if (!by_label && !by_name) return -EINVAL;

    enum { MAX_CHIPS = 64 };
    shutter_gpio_chip chips[MAX_CHIPS];
    int count = shutter_gpio_list_chips(chips, MAX_CHIPS);
    if (count < 0) return count;
    if (count > MAX_CHIPS) count = MAX_CHIPS;

    bool label_seen = false, denied = false;
    for (int i = 0; i < count; i++) {
        if (chips[i].open_errno != 0) {
            if (chips[i].open_errno == EACCES || chips[i].open_errno == EPERM) denied = true;
            continue;
        }
        if (by_label && strcmp(chips[i].label, chip_label) != 0) continue;
        label_seen = true;
        uint32_t found = offset;
        if (by_name) {
            if (chip_find_line_name(chips[i].path, line_name, &found) < 0) continue;
        } else if (offset >= chips[i].num_lines) {
            return -ENOENT;
        }
        copy_string(path_out, path_len, chips[i].path);
        *offset_out = found;
        return 0;
    }
    // A chip we could not open might have been the one: say so rather than "absent".
    if (denied && !label_seen) return -EACCES;
    if (by_label && !label_seen) return -ENODEV;
    return -ENOENT;
}

/* ------------------------------------------------------------ line requests */

#ifdef SHUTTER_GPIOD_V1

struct shutter_gpio_input {
    struct gpiod_chip *chip;
    struct gpiod_line *line;
    int fd;
};

struct shutter_gpio_output {
    struct gpiod_chip *chip;
    struct gpiod_line *line;
};

static int open_line(const char *path, uint32_t offset, struct gpiod_chip **chip_out,
                     struct gpiod_line **line_out) {
    errno = 0;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return neg_errno(ENODEV);
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    if (!line) {
        gpiod_chip_close(chip);
        return -ENOENT;
    }
    *chip_out = chip;
    *line_out = line;
    return 0;
}

int shutter_gpio_input_open(const char *path, uint32_t offset, const char *consumer,
                            int bias, shutter_gpio_input **out) {
    if (!path || !out) return -EINVAL;
    int flags;
    switch (bias) {
    case SHUTTER_GPIO_BIAS_AS_IS: flags = 0; break;
    case SHUTTER_GPIO_BIAS_PULL_UP: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case SHUTTER_GPIO_BIAS_PULL_DOWN: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    case SHUTTER_GPIO_BIAS_DISABLED: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    default: return -EINVAL;
    }
    shutter_gpio_input *in = calloc(1, sizeof *in);
    if (!in) return -ENOMEM;
    int rc = open_line(path, offset, &in->chip, &in->line);
    if (rc < 0) {
        free(in);
        return rc;
    }
    errno = 0;
    if (gpiod_line_request_both_edges_events_flags(in->line, consumer, flags) < 0) {
        rc = neg_errno(EIO);
        gpiod_chip_close(in->chip);
        free(in);
        return rc;
    }
    in->fd = gpiod_line_event_get_fd(in->line);
    rc = in->fd < 0 ? -EIO : set_nonblocking(in->fd);
    if (rc < 0) {
        gpiod_line_release(in->line);
        gpiod_chip_close(in->chip);
        free(in);
        return rc;
    }
    *out = in;
    return 0;
}

int shutter_gpio_input_fd(const shutter_gpio_input *in) {
    return in ? in->fd : -EINVAL;
}

int shutter_gpio_input_read(shutter_gpio_input *in, shutter_gpio_edge *out, int max) {
    if (!in || !out || max <= 0) return -EINVAL;
    enum { BATCH = 16 };
    struct gpiod_line_event events[BATCH];
    int want = max < BATCH ? max : BATCH;
    errno = 0;
    int n = read_result(gpiod_line_event_read_fd_multiple(in->fd, events, (unsigned)want));
    if (n <= 0) return n;
    for (int i = 0; i < n; i++) {
        // Since Linux 5.7 the v1 uAPI stamps events with CLOCK_MONOTONIC.
        out[i].timestamp_ns = (uint64_t)events[i].ts.tv_sec * 1000000000ull + (uint64_t)events[i].ts.tv_nsec;
        out[i].rising = events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    }
    return n;
}

int shutter_gpio_input_value(shutter_gpio_input *in) {
    if (!in) return -EINVAL;
    errno = 0;
    int v = gpiod_line_get_value(in->line);
    return v < 0 ? neg_errno(EIO) : v;
}

void shutter_gpio_input_close(shutter_gpio_input *in) {
    if (!in) return;
    gpiod_line_release(in->line);
    gpiod_chip_close(in->chip);
    free(in);
}

int shutter_gpio_output_open(const char *path, uint32_t offset, const char *consumer,
                             int initial, shutter_gpio_output **out) {
    if (!path || !out) return -EINVAL;
    shutter_gpio_output *o = calloc(1, sizeof *o);
    if (!o) return -ENOMEM;
    int rc = open_line(path, offset, &o->chip, &o->line);
    if (rc < 0) {
        free(o);
        return rc;
    }
    errno = 0;
    if (gpiod_line_request_output(o->line, consumer, initial ? 1 : 0) < 0) {
        rc = neg_errno(EIO);
        gpiod_chip_close(o->chip);
        free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int shutter_gpio_output_set(shutter_gpio_output *o, int value) {
    if (!o) return -EINVAL;
    errno = 0;
    return gpiod_line_set_value(o->line, value ? 1 : 0) < 0 ? neg_errno(EIO) : 0;
}

void shutter_gpio_output_close(shutter_gpio_output *o) {
    if (!o) return;
    gpiod_line_release(o->line);
    gpiod_chip_close(o->chip);
    free(o);
}

#else /* libgpiod v2 */

struct shutter_gpio_input {
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
    unsigned int offset;
};

struct shutter_gpio_output {
    struct gpiod_line_request *request;
    unsigned int offset;
};

// Builds the request from one line's settings; frees everything but the request.
static int request_line(const char *path, unsigned int offset, const char *consumer,
                        struct gpiod_line_settings *settings, struct gpiod_line_request **out) {
    int rc = 0;
    struct gpiod_chip *chip = NULL;
    struct gpiod_line_config *line_cfg = NULL;
    struct gpiod_request_config *req_cfg = NULL;
    errno = 0;
    chip = gpiod_chip_open(path);
    if (!chip) { rc = neg_errno(ENODEV); goto done; }
    line_cfg = gpiod_line_config_new();
    req_cfg = gpiod_request_config_new();
    if (!line_cfg || !req_cfg) { rc = -ENOMEM; goto done; }
    if (gpiod_line_config_add_line_settings(line_cfg, &offset, 1, settings) < 0) {
        rc = neg_errno(EINVAL);
        goto done;
    }
    if (consumer) gpiod_request_config_set_consumer(req_cfg, consumer);
    errno = 0;
    *out = gpiod_chip_request_lines(chip, req_cfg, line_cfg);
    if (!*out) rc = neg_errno(EIO);
done:
    if (req_cfg) gpiod_request_config_free(req_cfg);
    if (line_cfg) gpiod_line_config_free(line_cfg);
    if (chip) gpiod_chip_close(chip); // the request keeps its own fd
    return rc;
}

int shutter_gpio_input_open(const char *path, uint32_t offset, const char *consumer,
                            int bias, shutter_gpio_input **out) {
    if (!path || !out) return -EINVAL;
    enum gpiod_line_bias line_bias;
    switch (bias) {
    case SHUTTER_GPIO_BIAS_AS_IS: line_bias = GPIOD_LINE_BIAS_AS_IS; break;
    case SHUTTER_GPIO_BIAS_PULL_UP: line_bias = GPIOD_LINE_BIAS_PULL_UP; break;
    case SHUTTER_GPIO_BIAS_PULL_DOWN: line_bias = GPIOD_LINE_BIAS_PULL_DOWN; break;
    case SHUTTER_GPIO_BIAS_DISABLED: line_bias = GPIOD_LINE_BIAS_DISABLED; break;
    default: return -EINVAL;
    }
    struct gpiod_line_settings *s = gpiod_line_settings_new();
    if (!s) return -ENOMEM;
    int rc = 0;
    if (gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT) < 0 ||
        gpiod_line_settings_set_edge_detection(s, GPIOD_LINE_EDGE_BOTH) < 0 ||
        gpiod_line_settings_set_bias(s, line_bias) < 0 ||
        gpiod_line_settings_set_event_clock(s, GPIOD_LINE_CLOCK_MONOTONIC) < 0) {
        gpiod_line_settings_free(s);
        return -EINVAL;
    }
    shutter_gpio_input *in = calloc(1, sizeof *in);
    if (!in) { gpiod_line_settings_free(s); return -ENOMEM; }
    in->offset = offset;
    rc = request_line(path, offset, consumer, s, &in->request);
    gpiod_line_settings_free(s);
    if (rc < 0) { free(in); return rc; }
    in->buffer = gpiod_edge_event_buffer_new(16);
    rc = in->buffer ? set_nonblocking(gpiod_line_request_get_fd(in->request)) : -ENOMEM;
    if (rc < 0) {
        if (in->buffer) gpiod_edge_event_buffer_free(in->buffer);
        gpiod_line_request_release(in->request);
        free(in);
        return rc;
    }
    *out = in;
    return 0;
}

int shutter_gpio_input_fd(const shutter_gpio_input *in) {
    return in ? gpiod_line_request_get_fd(in->request) : -EINVAL;
}

int shutter_gpio_input_read(shutter_gpio_input *in, shutter_gpio_edge *out, int max) {
    if (!in || !out || max <= 0) return -EINVAL;
    size_t want = max < 16 ? (size_t)max : 16;
    errno = 0;
    int n = read_result(gpiod_line_request_read_edge_events(in->request, in->buffer, want));
    if (n <= 0) return n;
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(in->buffer, (unsigned long)i);
        out[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(e);
        out[i].rising = gpiod_edge_event_get_event_type(e) == GPIOD_EDGE_EVENT_RISING_EDGE;
    }
    return n;
}

int shutter_gpio_input_value(shutter_gpio_input *in) {
    if (!in) return -EINVAL;
    errno = 0;
    int v = (int)gpiod_line_request_get_value(in->request, in->offset);
    return v < 0 ? neg_errno(EIO) : v;
}

void shutter_gpio_input_close(shutter_gpio_input *in) {
    if (!in) return;
    gpiod_edge_event_buffer_free(in->buffer);
    gpiod_line_request_release(in->request);
    free(in);
}

int shutter_gpio_output_open(const char *path, uint32_t offset, const char *consumer,
                             int initial, shutter_gpio_output **out) {
    if (!path || !out) return -EINVAL;
    struct gpiod_line_settings *s = gpiod_line_settings_new();
    if (!s) return -ENOMEM;
    if (gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT) < 0 ||
        gpiod_line_settings_set_output_value(s, initial ? GPIOD_LINE_VALUE_ACTIVE
                                                        : GPIOD_LINE_VALUE_INACTIVE) < 0) {
        gpiod_line_settings_free(s);
        return -EINVAL;
    }
    shutter_gpio_output *o = calloc(1, sizeof *o);
    if (!o) { gpiod_line_settings_free(s); return -ENOMEM; }
    o->offset = offset;
    int rc = request_line(path, offset, consumer, s, &o->request);
    gpiod_line_settings_free(s);
    if (rc < 0) { free(o); return rc; }
    *out = o;
    return 0;
}

int shutter_gpio_output_set(shutter_gpio_output *o, int value) {
    if (!o) return -EINVAL;
    errno = 0;
    int rc = gpiod_line_request_set_value(o->request, o->offset,
                                          value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
    return rc < 0 ? neg_errno(EIO) : 0;
}

void shutter_gpio_output_close(shutter_gpio_output *o) {
    if (!o) return;
    gpiod_line_request_release(o->request);
    free(o);
}

#endif
