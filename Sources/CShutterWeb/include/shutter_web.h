// SPDX-License-Identifier: BSD-2-Clause
// The web page's C side: an HTTP server (GNU libmicrohttpd, 0.9.75 API, which
// 1.0 also builds) and session tokens (libsodium), behind one plain C
// header. Swift cannot call MHD_start_daemon (C variadic) and should not own
// MHD's callbacks, so this shim owns the daemon: one epoll thread for every
// socket, and a few workers on which Swift answers one whole request at a time
// through `shutter_web_handler` while its connection is parked (an idle
// connection costs MHD's memory pool, not a thread).
#ifndef SHUTTER_WEB_H
#define SHUTTER_WEB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shutter_web_server shutter_web_server;
/// One request (whole: headers and a body of at most `max_body` bytes) and its reply.
typedef struct shutter_web_exchange shutter_web_exchange;

/// Called once per request, on a worker thread (it may block that worker; the
/// others and every other connection go on). It must call one of the
/// shutter_web_reply_* functions; no reply is a 500.
typedef void (*shutter_web_handler)(void *ctx, shutter_web_exchange *ex);

/// A streamed body (the live preview, live events): fill `buf` with up to `max`
/// bytes without blocking (it runs on the one epoll thread). Returns the bytes
/// written, 0 when nothing is ready (the connection is parked until
/// shutter_web_stream_wake, or at most a second), -1 at the end, -2 on error.
typedef ssize_t (*shutter_web_reader)(void *ctx, uint64_t pos, char *buf, size_t max);
typedef void (*shutter_web_reader_free)(void *ctx);
/// One open streamed reply; valid until its `release` has been called.
typedef struct shutter_web_stream shutter_web_stream;

typedef struct {
    /// A listening socket passed by systemd (>= 0), else -1: bind host:port.
    int listen_fd;
    /// Numeric address to bind ("0.0.0.0", "::", "127.0.0.1"); port 0 = any free port.
    const char *host;
    unsigned short port;
    /// PEM certificate and key (the file contents); NULL = plain HTTP. TLS is 1.2 or
    /// 1.3 with AEAD ciphers only, and a client's renegotiation is refused.
    const char *tls_cert_pem;
    const char *tls_key_pem;
    unsigned connection_limit;
    /// Connections from one address past this get 503 with Retry-After: 1; past twice
    /// this libmicrohttpd refuses them at accept (a flood, not a browser).
    unsigned per_ip_limit;
    /// Threads that run the handler (0 = 4).
    unsigned workers;
    unsigned timeout_seconds;
    size_t memory_limit;
    /// Larger bodies get 413 before they are read (Content-Length), or once they
    /// end (chunked; one that goes on past 16 times this is cut off).
    size_t max_body;
} shutter_web_options;

/// Starts the daemon. NULL on failure, with the reason in `err`.
shutter_web_server *shutter_web_start(const shutter_web_options *options, shutter_web_handler handler,
                                      void *ctx, char *err, size_t errlen);
/// The port it listens on (after port 0: the one the kernel chose).
unsigned short shutter_web_port(const shutter_web_server *server);
/// Answers queued requests 503, waits for the running ones, ends the streams,
/// closes every connection and the socket.
void shutter_web_stop(shutter_web_server *server);

// --- The request.
const char *shutter_web_method(const shutter_web_exchange *ex);
/// The path, percent-decoded by MHD, without the query string.
const char *shutter_web_url(const shutter_web_exchange *ex);
/// A request header (case-insensitive name), NULL when absent.
const char *shutter_web_header(const shutter_web_exchange *ex, const char *name);
/// A query argument ("?page=2"), NULL when absent.
const char *shutter_web_query(const shutter_web_exchange *ex, const char *name);
/// The client's numeric address ("192.168.1.20", "::1").
const char *shutter_web_client(const shutter_web_exchange *ex);
const void *shutter_web_body(const shutter_web_exchange *ex, size_t *length);
/// 1 when the server speaks TLS (cookies get Secure).
int shutter_web_is_tls(const shutter_web_exchange *ex);

// --- The reply (exactly one of the three; headers after it).
void shutter_web_reply_bytes(shutter_web_exchange *ex, unsigned status, const char *content_type,
                             const void *data, size_t length);
/// `length` bytes of `fd` from `offset`, by sendfile where it can; the fd is
/// closed with the response (also on failure: returns 0 then).
int shutter_web_reply_file(shutter_web_exchange *ex, unsigned status, const char *content_type,
                           int fd, uint64_t offset, uint64_t length);
/// A body of unknown length (chunked), read by `reader` until it returns -1;
/// `release` is called with `ctx` when the connection is done with it (also when
/// this fails: NULL, and no reply).
shutter_web_stream *shutter_web_reply_stream(shutter_web_exchange *ex, unsigned status, const char *content_type,
                                             shutter_web_reader reader, void *ctx, shutter_web_reader_free release);
/// The stream has bytes to send (or has ended): its reader is called again soon.
/// Any thread; never after the stream's `release` has returned.
void shutter_web_stream_wake(shutter_web_stream *stream);
void shutter_web_add_header(shutter_web_exchange *ex, const char *name, const char *value);

// --- Session tokens (libsodium). Password hashing is CShutterPassword's.
/// `count` random bytes as URL-safe base64 without padding into `out` (NUL-terminated).
void shutter_web_random_token(size_t count, char *out, size_t outlen);
/// Constant-time equality of two NUL-terminated strings of the same length; 1 = equal.
int shutter_web_equal(const char *a, const char *b);
/// The same for byte strings (a secret's time depends only on its length); 1 = equal.
int shutter_web_equal_bytes(const void *a, size_t a_length, const void *b, size_t b_length);

#ifdef __cplusplus
}
#endif
#endif
