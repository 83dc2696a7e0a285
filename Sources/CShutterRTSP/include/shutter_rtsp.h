// SPDX-License-Identifier: BSD-2-Clause
// shutter_rtsp: the live RTSP server (GStreamer's RTSP server library) behind a plain C
// API. The shim owns the GLib main loop and its thread, the media factory and its
// appsrc elements; Swift pushes the encoder's H.264 access units and the microphone's
// samples, and answers whether a Basic password may watch.
#ifndef SHUTTER_RTSP_H
#define SHUTTER_RTSP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shutter_rtsp shutter_rtsp;

/// Whether `password` (HTTP Basic's password, `length` bytes, which may hold a NUL; the
/// user name is not checked) from the peer `address` may watch: 1 yes, 0 no. Called on the
/// server's thread, once per RTSP request that carries one.
typedef int (*shutter_rtsp_check_fn)(void *context, const char *password, size_t length, const char *address);
/// A line for the service's log (priority as syslog's: 3 error, 4 warning, 5 notice), on the
/// server's thread.
typedef void (*shutter_rtsp_log_fn)(void *context, int priority, const char *message);

typedef struct {
    const char *host;         // "0.0.0.0", "127.0.0.1", "::"
    int port;                 // 0 = any free port (tests): see shutter_rtsp_port
    const char *path;         // "/live"
    int max_viewers;          // RTSP sessions at once; a further SETUP is answered 503
    int open;                 // 1: no authentication at all (live.rtsp.open)
    int stall_seconds;        // a TCP viewer whose socket takes nothing for this long is closed
    int listen_fd;            // > 0: accept on this listening socket (one systemd passed; the server's:
                              // closed at the stop, or when the start fails) instead of host:port, and RTP only inside the RTSP connection
                              // (TCP): a process without a network of its own cannot send UDP
    shutter_rtsp_check_fn check;
    void *check_context;      // for check and log
    shutter_rtsp_log_fn log;
} shutter_rtsp_config;

/// What a peer may hold before it has a session (shutter_rtsp.c; the connections per
/// address and in all come from max_viewers there): seconds to its first answered request
/// and to logging in or a session, and the bytes of a request body.
#define SHUTTER_RTSP_FIRST_REQUEST_SECONDS 5
#define SHUTTER_RTSP_SESSIONLESS_SECONDS 20
#define SHUTTER_RTSP_BODY_LIMIT 4096

typedef struct {
    int64_t video_pushed;     // access units handed to the stream
    int64_t video_dropped;    // not handed over: the stream was behind (until the next keyframe)
    int64_t audio_pushed;     // sample chunks
    int64_t viewers;          // RTSP sessions now
    int64_t refused;          // requests answered 401
    int64_t stalled_closed;   // viewers closed because they stopped reading
    int64_t connections;      // RTSP connections open now
    int64_t turned_away;      // connections closed at once: too many from that address or in all
    int64_t idle_closed;      // closed for sending no request, or holding no session, in time
} shutter_rtsp_stats;

/// Starts listening. 0, or a negative value with a message in `err`.
int shutter_rtsp_start(const shutter_rtsp_config *cfg, shutter_rtsp **out, char *err, size_t errlen);
/// The port it listens on.
int shutter_rtsp_port(const shutter_rtsp *s);
/// The stream's audio for media made from now on: 0 channels = video only.
void shutter_rtsp_set_audio(shutter_rtsp *s, int sample_rate, int channels);
/// Whether a stream is being played (at least one session): frames are wanted.
int shutter_rtsp_watched(shutter_rtsp *s);
/// One H.264 access unit in Annex B. `header` (SPS and PPS, Annex B, may be NULL) goes
/// before a keyframe. A stream starts at a keyframe; one that is behind drops to the next.
void shutter_rtsp_push_video(shutter_rtsp *s, const uint8_t *header, size_t header_len, const uint8_t *data,
                             size_t len, int key);
/// Interleaved signed 16-bit samples (count = frames × channels).
void shutter_rtsp_push_audio(shutter_rtsp *s, const int16_t *samples, size_t count);
void shutter_rtsp_get_stats(shutter_rtsp *s, shutter_rtsp_stats *out);
/// Closes every viewer, stops the thread, frees everything.
void shutter_rtsp_stop(shutter_rtsp *s);

#ifdef __cplusplus
}
#endif

#endif
