// SPDX-License-Identifier: BSD-2-Clause
/*
 * Plain C face of the libcamera shim. The C++ side (shutter_libcamera.cpp) owns
 * every libcamera object and thread; Swift only sees opaque handles, POD structs
 * and file descriptors. Every function that can fail returns 0 or -errno and
 * never lets a C++ exception cross this boundary.
 */
#ifndef SHUTTER_LIBCAMERA_H
#define SHUTTER_LIBCAMERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shc_manager shc_manager;
typedef struct shc_camera shc_camera;

#define SHC_ID_MAX 256
#define SHC_NAME_MAX 64
#define SHC_MAX_PLANES 3

/* properties::Location values, plus "not reported". */
#define SHC_LOCATION_UNKNOWN (-1)
#define SHC_LOCATION_FRONT 0
#define SHC_LOCATION_BACK 1
#define SHC_LOCATION_EXTERNAL 2

typedef struct {
    char id[SHC_ID_MAX];
    char model[SHC_NAME_MAX];       /* properties::Model, "" when absent */
    int32_t location;               /* SHC_LOCATION_* */
    int32_t rotation;               /* properties::Rotation in degrees, -1 when absent */
    int32_t pixel_array_width;      /* 0 when absent */
    int32_t pixel_array_height;
    int32_t has_autofocus;          /* the camera exposes AfMode */
    int32_t has_lens_position;      /* the camera exposes LensPosition */
    float lens_position_min;        /* dioptres */
    float lens_position_max;
    float lens_position_default;    /* the tuning's default: hyperfocal on a Pi module */
} shc_camera_info;

/* Version of the libcamera headers the shim was compiled against ("0.0.3"). */
const char *shc_libcamera_header_version(void);

/* The one CameraManager of the process, reference counted: the first acquire
 * creates and starts it, the last release stops and destroys it. Open cameras
 * hold their own reference, so the manager always outlives them. */
int shc_manager_acquire(shc_manager **out);
void shc_manager_release(shc_manager *m);
/* Version string of the running libcamera library (may differ from the headers). */
const char *shc_manager_library_version(shc_manager *m);
/* Fills up to `capacity` entries; returns the number of cameras present (>= 0) or -errno. */
int shc_manager_cameras(shc_manager *m, shc_camera_info *out, size_t capacity);

/* Acquires the camera with this id for exclusive use. -ENODEV when absent,
 * -EBUSY when another process holds it. */
int shc_camera_open(shc_manager *m, const char *id, shc_camera **out);
/* Stops if running, releases the camera, then drops the manager reference.
 * Frames still held stay readable (their mappings live until released). */
void shc_camera_close(shc_camera *c);
/* Readable (eventfd) when frames completed or the camera was disconnected. */
int shc_camera_event_fd(shc_camera *c);
/* Clears the eventfd counter; call before draining with shc_camera_next_frame. */
void shc_camera_consume_event(shc_camera *c);

#define SHC_ROLE_VIDEO 0
#define SHC_ROLE_STILL 1

typedef struct {
    uint32_t width;
    uint32_t height;
} shc_size;

typedef struct {
    int32_t role;                       /* SHC_ROLE_* */
    const shc_size *sizes;              /* preferences, best first; none = pipeline default */
    size_t size_count;
    const uint32_t *fourccs;            /* DRM fourcc preferences, best first; none = default */
    size_t fourcc_count;
    int32_t rotation;                   /* 0 or 180 */
    int32_t hflip;
    int32_t vflip;
    uint32_t buffer_count;              /* 0 = pipeline default */
} shc_stream_request;

typedef struct {
    uint32_t width;
    uint32_t height;
    uint32_t stride;                    /* bytes per line of the first plane */
    uint32_t frame_size;
    uint32_t fourcc;
    uint32_t buffer_count;
    int32_t exact;                      /* the first size and format preference were granted as asked */
    int32_t transform_granted;          /* the rotation/flip was accepted unchanged */
    char description[64];               /* libcamera's "1920x1080-YUV420" */
} shc_stream_info;

/* Validates the preferences (best first, first exact match wins, else the
 * first valid adjusted one) and configures the camera. Not while running. */
int shc_camera_configure(shc_camera *c, const shc_stream_request *req, shc_stream_info *out);

/* What became of the still stream asked beside video (shc_camera_configure_pair). */
#define SHC_STILL_GRANTED 1        /* both streams configured: every request holds one buffer of each */
#define SHC_STILL_ONE_STREAM 0     /* the pipeline gives one stream only (vimc, UVC): video alone */
#define SHC_STILL_NOT_GRANTED (-1) /* two streams possible, but none of the still sizes
                                    * (or only by changing the video stream): video alone */

/* The video stream chosen as shc_camera_configure does, plus a still stream
 * in the same configuration (roles VideoRecording + StillCapture; the Raspberry
 * Pi ISP's second output). The still sizes and formats are tried best first
 * beside the chosen video stream; the first granted exactly, with the video
 * stream unchanged, wins. Otherwise the camera is configured with video alone
 * and still_out is zeroed. Both streams get the video's buffer count (a request
 * holds one buffer of each, so both complete from the same sensor frame).
 * `still` NULL is shc_camera_configure. Not while running. */
int shc_camera_configure_pair(shc_camera *c, const shc_stream_request *video, const shc_stream_request *still,
                              shc_stream_info *video_out, shc_stream_info *still_out, int32_t *still_result);

/* The sensor's own output sizes (the Raw role's formats: on a Raspberry Pi the
 * sensor modes), largest first, distinct. Fills up to `capacity`; returns how
 * many there are (0 when the pipeline offers no raw stream) or -errno. The Raw
 * role is asked only of a camera that reports a sensor (PixelArraySize): a
 * pipeline without one (the virtual cameras) logs an ERROR for the question. */
int shc_camera_sensor_sizes(shc_camera *c, shc_size *out, size_t capacity);

/* The sizes the stream of `req->role` itself lists (its StreamFormats), in the
 * request's formats (every format when it names none): discrete sizes as listed;
 * a range gives its two ends and the common sizes inside it (what
 * StreamFormats::sizes() makes of a range). Largest first, distinct. Fills up to
 * `capacity`; returns how many there are (0 when the role is not offered) or -errno. */
int shc_camera_stream_sizes(shc_camera *c, const shc_stream_request *req, shc_size *out, size_t capacity);

typedef struct {
    uint32_t count;                     /* buffers allocated */
    uint32_t planes;                    /* planes per buffer */
    uint64_t bytes_per_buffer;          /* the planes' lengths added up */
} shc_buffer_usage;

/* The buffers the last successful start allocated, per stream (the still stream's
 * zeroed when there is none); all zero before a start or after a failed one. */
int shc_camera_buffer_usage(shc_camera *c, shc_buffer_usage *video, shc_buffer_usage *still);
/* Allocates and maps the buffers once, creates one request per buffer, starts
 * with the persistent controls and queues every request. -ENOMEM when the
 * buffers cannot be allocated (a small CMA area, a udmabuf size limit). */
int shc_camera_start(shc_camera *c);
/* Stops and frees requests and allocator. Safe when not running. Blocks for
 * Camera::stop() (a mode switch), but without the lock frames are released under. */
int shc_camera_stop(shc_camera *c);

typedef struct {
    void *token;                        /* give to shc_frame_release exactly once */
    uint32_t plane_count;
    const uint8_t *plane_data[SHC_MAX_PLANES];
    uint32_t plane_length[SHC_MAX_PLANES];
    uint64_t sequence;
    int64_t timestamp_ns;               /* SensorTimestamp, else the buffer timestamp (CLOCK_MONOTONIC) */
    uint64_t af_cycle;                  /* AF triggers applied up to this request */
    int32_t has_exposure_time;
    int32_t exposure_time_us;
    int32_t has_analogue_gain;
    float analogue_gain;
    int32_t has_digital_gain;
    float digital_gain;
    int32_t has_lux;
    float lux;
    int32_t has_colour_temperature;
    int32_t colour_temperature;
    int32_t has_af_state;
    int32_t af_state;                   /* controls::AfStateEnum: 0 idle 1 scanning 2 focused 3 failed */
    int32_t has_lens_position;
    float lens_position;
    int32_t has_colour_gains;
    float colour_gains[2];              /* red, blue */
    int32_t has_exposure_value;
    float exposure_value;               /* stops */
    int32_t has_awb_enable;
    int32_t awb_enable;
    int32_t has_scaler_crop;
    int32_t scaler_crop[4];             /* x, y, width, height in sensor pixels */
    int32_t scaler_crop_maximum[4];     /* what shc_camera_crop_maximum gives, width 0 when unknown */
    /* The still stream's buffer of the same request (configured by
     * shc_camera_configure_pair); 0 planes when there is none or it failed. */
    uint32_t still_plane_count;
    const uint8_t *still_plane_data[SHC_MAX_PLANES];
    uint32_t still_plane_length[SHC_MAX_PLANES];
} shc_frame;

/* Next completed frame: 0, or -EAGAIN when none is waiting, -ENODEV when the
 * camera was disconnected. Cancelled and failed requests are requeued and counted. */
int shc_camera_next_frame(shc_camera *c, shc_frame *out);
/* Gives the buffers back (both streams' of a pair): the request is reused and queued if its session is
 * still running; the mapping is unmapped with the last frame of a session.
 * Any thread; valid after shc_camera_close. Never waits for a stop, configure
 * or start in progress: a frame of a session being stopped is only dropped. */
void shc_frame_release(void *token);

typedef struct {
    uint64_t completed;
    uint64_t cancelled_while_running;   /* a camera timeout for the watchdog */
    uint64_t failed;                    /* buffer error */
    uint64_t requeue_errors;
    int32_t disconnected;
    int32_t running;
} shc_counters;

void shc_camera_counters(shc_camera *c, shc_counters *out);

/* Controls by libcamera name ("AfMode", "ExposureTime", "ColourGains", ...).
 * Values are converted to the control's own type (bool, int32, int64, float,
 * scalar or array; a Rectangle from x, y, width, height). Persistent controls are also given to every start();
 * others go to the next queued request only. -ENOTSUP when the camera lacks
 * the control, -EINVAL for a type that cannot be set this way. */
#define SHC_CONTROL_ONCE 0
#define SHC_CONTROL_PERSISTENT 1
int shc_camera_has_control(shc_camera *c, const char *name);
/* min/max/default of a scalar numeric control; -ENOTSUP when absent or not numeric. */
int shc_camera_control_range(shc_camera *c, const char *name, double *min, double *max, double *def);
int shc_camera_set_control(shc_camera *c, const char *name, const double *values, size_t count,
                           int32_t persistence);
/* AfWindows (and AfMetering = Windows): rectangles in ScalerCrop coordinates,
 * 4 values (x, y, width, height) per window. count 0 goes back to AfMetering Auto. */
int shc_camera_set_af_windows(shc_camera *c, const int32_t *rects, size_t count);
/* The largest ScalerCrop of the configured mode (the ScalerCrop control's maximum,
 * else ScalerCropMaximum, else the pixel array) so callers can map a normalised
 * point or rectangle (zoom, region of interest, AF window). */
int shc_camera_crop_maximum(shc_camera *c, int32_t *x, int32_t *y, int32_t *width, int32_t *height);
/* AfMode Auto + AfTrigger Start on the next request. Returns the af_cycle that
 * frames will report once the trigger is applied (> 0), or -ENOTSUP. */
int64_t shc_camera_af_trigger(shc_camera *c);

#ifdef __cplusplus
}
#endif

#endif
