// SPDX-License-Identifier: BSD-2-Clause
// The HTTP server: libmicrohttpd owns sockets, parsing and threads; this file
// gathers one request (with a small body) and hands it to the Swift handler.
#define _GNU_SOURCE
#include "shutter_web.h"

#include <microhttpd.h>
#include <gnutls/gnutls.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/// Everything one request needs from its first byte to its reply. MHD's `con_cls`.
/// A whole request is parked (its connection suspended) while a worker runs the
/// Swift handler, so MHD's one thread never waits for the camera or Argon2id.
struct pending {
    char *body;
    size_t length;
    /// A chunked body passed max_body: the rest is read and dropped, then 413.
    int too_large;
    size_t dropped;
    enum { GATHERING, QUEUED, ANSWERED } state;
    /// Counted in the server's replies_in_flight until on_completed.
    int in_flight;
    struct pending *next_queued;
    struct shutter_web_exchange *ex;
    /// The client's numeric address, read once at the request's start.
    char client[INET6_ADDRSTRLEN + 8];
};

struct shutter_web_exchange {
    shutter_web_server *server;
    struct MHD_Connection *connection;
    const char *method;
    const char *url;
    const struct pending *pending;
    char client[INET6_ADDRSTRLEN + 8];
    struct MHD_Response *response;
    unsigned status;
};

/// An endless body (the preview, live events): parked while it has nothing to send.
struct shutter_web_stream {
    shutter_web_server *server;
    struct MHD_Connection *connection;
    shutter_web_reader reader;
    shutter_web_reader_free release;
    void *ctx;
    pthread_mutex_t lock;
    /// Guarded by `lock`: parked by the reader, or woken while it was reading.
    int suspended;
    int woken;
    struct shutter_web_stream *prev, *next;
};

/// Connections per client address, counted as MHD opens and closes them (in MHD's
/// own thread, with no lag): over `soft_per_ip` a request is answered 503 with
/// Retry-After instead of being reset.
struct address_count {
    char address[INET6_ADDRSTRLEN + 8];
    unsigned count;
};

enum { MAX_WORKERS = 16, ADDRESS_SLOTS = 512 };

struct shutter_web_server {
    struct MHD_Daemon *daemon;
    shutter_web_handler handler;
    void *ctx;
    size_t max_body;
    unsigned soft_per_ip;
    int tls;
    char *cert;
    char *key;

    /// Guards everything below.
    pthread_mutex_t lock;
    pthread_cond_t work;
    /// The ticker's own (a signal for a worker must not wake the ticker instead).
    pthread_cond_t tick;
    struct pending *queue_head, *queue_tail;
    /// Set once, under `lock`, with __atomic_store_n (stream_read reads it without `lock`).
    int stopping;
    pthread_t workers[MAX_WORKERS];
    unsigned worker_count;
    pthread_t ticker;
    int ticker_started;
    struct shutter_web_stream *streams;
    /// Requests answered by a worker whose reply MHD has not finished sending; at
    /// stop it waits for them (and for the streams), so a reply is not cut off.
    unsigned replies_in_flight;
    pthread_cond_t settled;
    struct address_count addresses[ADDRESS_SLOTS];
};

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static enum MHD_Result queue_text(struct MHD_Connection *c, unsigned status, const char *json) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static void client_address(struct MHD_Connection *c, char *out, size_t len) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(out, len, "unknown");
    if (!info || !info->client_addr) return;
    const struct sockaddr *sa = info->client_addr;
    socklen_t salen = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo(sa, salen, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0) snprintf(out, len, "unknown");
    // An IPv4 client on a dual-stack socket: show (and throttle) it as IPv4.
    if (strncmp(out, "::ffff:", 7) == 0 && strchr(out + 7, '.')) memmove(out, out + 7, strlen(out + 7) + 1);
}

// --- TLS: protocols, ciphers and renegotiation.

/// TLS 1.2 and 1.3 only, AEAD ciphers only (AES-GCM, ChaCha20-Poly1305), ECDHE key
/// exchange (issue 23 item 5). GnuTLS's default %PARTIAL_RENEGOTIATION stays:
/// %SAFE_RENEGOTIATION would refuse TLS 1.3 hellos without RFC 5746's signal, for
/// nothing, as no renegotiation is ever done (below).
static const char tls_priorities[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:"
    "-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:"
    "-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA";

/// Client-initiated renegotiation (TLS 1.2). GnuTLS hands a renegotiating ClientHello
/// to the application as GNUTLS_E_REHANDSHAKE without doing any handshake work;
/// libmicrohttpd then ends the connection with a close_notify, which a client cannot
/// tell from an orderly close. So the shim watches the records each connection
/// receives (record headers only: it reads no plaintext) and answers a handshake
/// record after the handshake with the RFC 5246 no_renegotiation alert first: the
/// client learns it was refused, then the connection ends as before.
struct tls_watch {
    int fd;
    gnutls_session_t session;
    int change_cipher_spec_seen;
    int handshake_over;
    int refused;
    unsigned char header[5];
    size_t header_have;
    size_t body_left;
};

enum { TLS_WATCH_SLOTS = 256 };
static struct tls_watch tls_watches[TLS_WATCH_SLOTS];
static pthread_mutex_t tls_watch_lock = PTHREAD_MUTEX_INITIALIZER;

/// Follows record boundaries through `n` received bytes; 1 when a handshake record
/// comes after the handshake (a renegotiation attempt), the first time only.
static int tls_watch_bytes(struct tls_watch *w, const unsigned char *p, size_t n) {
    int renegotiation = 0;
    while (n > 0) {
        if (w->body_left > 0) {
            size_t k = n < w->body_left ? n : w->body_left;
            w->body_left -= k; p += k; n -= k;
            continue;
        }
        w->header[w->header_have++] = *p++;
        n--;
        if (w->header_have < sizeof w->header) continue;
        w->header_have = 0;
        w->body_left = ((size_t)w->header[3] << 8) | w->header[4];
        // The handshake is over once the client sent application data, or the one
        // handshake record (Finished) after its ChangeCipherSpec. TLS 1.3 sends no
        // handshake record after either (its own are wrapped as application data).
        switch (w->header[0]) {
        case 20: w->change_cipher_spec_seen = 1; break;
        case 23: w->handshake_over = 1; break;
        case 22:
            if (w->handshake_over && !w->refused) renegotiation = w->refused = 1;
            else if (w->change_cipher_spec_seen) w->handshake_over = 1;
            break;
        }
    }
    return renegotiation;
}

/// GnuTLS's pull function for watched connections: recv(2) as GnuTLS's own, plus the watch.
static ssize_t tls_watched_pull(gnutls_transport_ptr_t ptr, void *buf, size_t len) {
    int fd = (int)(intptr_t)ptr;
    ssize_t n = recv(fd, buf, len, 0);
    if (n <= 0) return n;
    gnutls_session_t refuse = NULL;
    pthread_mutex_lock(&tls_watch_lock);
    for (int i = 0; i < TLS_WATCH_SLOTS; i++) {
        struct tls_watch *w = &tls_watches[i];
        if (w->session && w->fd == fd) {
            if (tls_watch_bytes(w, buf, (size_t)n)) refuse = w->session;
            break;
        }
    }
    pthread_mutex_unlock(&tls_watch_lock);
    // On this connection's own thread, inside its gnutls_record_recv: GnuTLS allows a
    // send beside a receive. TLS 1.3 has no renegotiation (and no such records).
    if (refuse && gnutls_protocol_get_version(refuse) == GNUTLS_TLS1_2) {
        int saved = errno;
        gnutls_alert_send(refuse, GNUTLS_AL_WARNING, GNUTLS_A_NO_RENEGOTIATION);
        errno = saved;
    }
    return n;
}

// --- Connections per address.

/// Counts a connection in (+1) or out (-1) for its address; the count after. Called
/// from MHD's thread as connections open and close (under the server lock).
static unsigned count_address(shutter_web_server *s, const char *address, int delta) {
    struct address_count *slot = NULL, *free_slot = NULL;
    for (int i = 0; i < ADDRESS_SLOTS; i++) {
        struct address_count *a = &s->addresses[i];
        if (a->count > 0 && strcmp(a->address, address) == 0) { slot = a; break; }
        if (a->count == 0 && !free_slot) free_slot = a;
    }
    if (!slot) {
        // More distinct addresses than slots cannot happen (the connection limit is
        // below ADDRESS_SLOTS); uncounted, such a connection is merely not limited here.
        if (delta < 0 || !free_slot) return 0;
        slot = free_slot;
        snprintf(slot->address, sizeof slot->address, "%s", address);
    }
    if (delta > 0) slot->count++;
    else if (slot->count > 0) slot->count--;
    return slot->count;
}

static unsigned connections_from(shutter_web_server *s, const char *address) {
    unsigned n = 0;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < ADDRESS_SLOTS; i++)
        if (s->addresses[i].count > 0 && strcmp(s->addresses[i].address, address) == 0) n = s->addresses[i].count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void watch_tls(struct MHD_Connection *connection, int fd, int started) {
    if (started) {
        const union MHD_ConnectionInfo *tls = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        if (!tls || !tls->tls_session) return;
        gnutls_session_t session = (gnutls_session_t)tls->tls_session;
        pthread_mutex_lock(&tls_watch_lock);
        struct tls_watch *slot = NULL;
        for (int i = 0; i < TLS_WATCH_SLOTS && !slot; i++)
            if (tls_watches[i].session && tls_watches[i].fd == fd) slot = &tls_watches[i];
        for (int i = 0; i < TLS_WATCH_SLOTS && !slot; i++)
            if (!tls_watches[i].session) slot = &tls_watches[i];
        if (slot) {
            memset(slot, 0, sizeof *slot);
            slot->fd = fd;
            slot->session = session;
            gnutls_transport_set_pull_function(session, tls_watched_pull);
        }
        pthread_mutex_unlock(&tls_watch_lock);
        // No free slot (more connections than TLS_WATCH_SLOTS): the connection is not
        // watched and a renegotiation attempt just ends it, as libmicrohttpd does on its own.
    } else {
        pthread_mutex_lock(&tls_watch_lock);
        for (int i = 0; i < TLS_WATCH_SLOTS; i++)
            if (tls_watches[i].session && tls_watches[i].fd == fd) memset(&tls_watches[i], 0, sizeof tls_watches[i]);
        pthread_mutex_unlock(&tls_watch_lock);
    }
}

/// MHD_OPTION_NOTIFY_CONNECTION: every connection is counted against its address from
/// its start to its close; a TLS one is also watched (before its handshake, until after
/// gnutls_deinit and before its socket is closed, so a slot's fd is never another
/// live connection's).
static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    shutter_web_server *s = cls;
    const union MHD_ConnectionInfo *fdinfo = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    int started = toe == MHD_CONNECTION_NOTIFY_STARTED;
    if (started) {
        char address[INET6_ADDRSTRLEN + 8];
        client_address(connection, address, sizeof address);
        pthread_mutex_lock(&s->lock);
        count_address(s, address, +1);
        pthread_mutex_unlock(&s->lock);
        *socket_context = strdup(address);
    } else if (*socket_context) {
        pthread_mutex_lock(&s->lock);
        count_address(s, *socket_context, -1);
        pthread_mutex_unlock(&s->lock);
        free(*socket_context);
        *socket_context = NULL;
    }
    if (s->tls && fdinfo) watch_tls(connection, fdinfo->connect_fd, started);
}

// --- Requests: gathered by MHD's thread, answered by a worker.

static enum MHD_Result queue_busy(struct MHD_Connection *c, const char *json) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, r);
    MHD_destroy_response(r);
    return ret;
}

static void *worker_main(void *arg) {
    shutter_web_server *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->queue_head && !s->stopping) pthread_cond_wait(&s->work, &s->lock);
        struct pending *p = s->queue_head;
        if (!p) { pthread_mutex_unlock(&s->lock); return NULL; }
        s->queue_head = p->next_queued;
        if (!s->queue_head) s->queue_tail = NULL;
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        if (stopping) {
            static const char msg[] = "{\"ok\":false,\"error\":\"the camera service is stopping\"}";
            shutter_web_reply_bytes(p->ex, MHD_HTTP_SERVICE_UNAVAILABLE, "application/json", msg, sizeof msg - 1);
        } else {
            s->handler(s->ctx, p->ex);
        }
        pthread_mutex_lock(&s->lock);
        p->state = ANSWERED;
        p->in_flight = 1;
        s->replies_in_flight++;
        pthread_mutex_unlock(&s->lock);
        // MHD calls on_request again for this connection, which queues the reply.
        MHD_resume_connection(p->ex->connection);
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    (void)version;
    shutter_web_server *s = cls;
    struct pending *p = *con_cls;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p) return MHD_NO;
        *con_cls = p;
        client_address(connection, p->client, sizeof p->client);
        if (connections_from(s, p->client) > s->soft_per_ip)
            return queue_busy(connection, "{\"ok\":false,\"error\":\"too many connections from this address; try again in a second\"}");
        // A body announced larger than allowed is refused before any of it is read.
        const char *cl = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            errno = 0;
            char *end = NULL;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno != 0 || end == cl || n > s->max_body)
                return queue_text(connection, MHD_HTTP_CONTENT_TOO_LARGE,
                                  "{\"ok\":false,\"error\":\"request body too large\"}");
        }
        return MHD_YES;
    }
    if (p->state == ANSWERED) {
        shutter_web_exchange *ex = p->ex;
        if (!ex->response) return queue_text(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "{\"ok\":false,\"error\":\"no reply\"}");
        enum MHD_Result ret = MHD_queue_response(connection, ex->status, ex->response);
        MHD_destroy_response(ex->response);
        ex->response = NULL;
        return ret;
    }
    if (*upload_data_size != 0) {
        // A chunked body has no length up front, and libmicrohttpd takes a reply only
        // once the request is whole: past the limit the rest is read and dropped and
        // 413 answered at its end; one that goes on past 16 times the limit is cut off.
        if (p->too_large || p->length + *upload_data_size > s->max_body) {
            p->too_large = 1;
            p->dropped += *upload_data_size;
            if (p->dropped > 16 * s->max_body) return MHD_NO;
            *upload_data_size = 0;
            return MHD_YES;
        }
        char *grown = realloc(p->body, p->length + *upload_data_size + 1);
        if (!grown) return MHD_NO;
        memcpy(grown + p->length, upload_data, *upload_data_size);
        p->body = grown;
        p->length += *upload_data_size;
        p->body[p->length] = 0;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (p->too_large)
        return queue_text(connection, MHD_HTTP_CONTENT_TOO_LARGE, "{\"ok\":false,\"error\":\"request body too large\"}");
    if (p->state == QUEUED) return MHD_YES;  // not expected: MHD does not call a parked connection
    shutter_web_exchange *ex = calloc(1, sizeof *ex);
    if (!ex) return MHD_NO;
    *ex = (shutter_web_exchange){.server = s, .connection = connection, .method = method, .url = url, .pending = p};
    memcpy(ex->client, p->client, sizeof ex->client);
    p->ex = ex;
    pthread_mutex_lock(&s->lock);
    if (s->stopping) {
        pthread_mutex_unlock(&s->lock);
        return queue_busy(connection, "{\"ok\":false,\"error\":\"the camera service is stopping\"}");
    }
    // Parked before a worker can see it, so the worker's resume always follows.
    MHD_suspend_connection(connection);
    p->state = QUEUED;
    if (s->queue_tail) s->queue_tail->next_queued = p; else s->queue_head = p;
    s->queue_tail = p;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->lock);
    return MHD_YES;
}

// --- Streams: parked while they have nothing to send.

/// MHD's content reader: the Swift reader never blocks; with nothing to send the
/// connection is parked until `shutter_web_stream_wake` (a new frame or event, or the
/// ticker's once a second so a stream can end or send a keep-alive on its own clock).
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    struct shutter_web_stream *st = cls;
    for (;;) {
        ssize_t n = st->reader(st->ctx, pos, buf, max);
        if (n != 0) return n;
        pthread_mutex_lock(&st->lock);
        // Read without the server lock (wake_all_streams takes it before a stream's).
        if (__atomic_load_n(&st->server->stopping, __ATOMIC_SEQ_CST)) { pthread_mutex_unlock(&st->lock); return MHD_CONTENT_READER_END_OF_STREAM; }
        if (st->woken) {  // something came while the reader looked: read again
            st->woken = 0;
            pthread_mutex_unlock(&st->lock);
            continue;
        }
        st->suspended = 1;
        MHD_suspend_connection(st->connection);
        pthread_mutex_unlock(&st->lock);
        return 0;
    }
}

static void stream_free(void *cls) {
    struct shutter_web_stream *st = cls;
    shutter_web_server *s = st->server;
    pthread_mutex_lock(&s->lock);
    if (st->prev) st->prev->next = st->next; else s->streams = st->next;
    if (st->next) st->next->prev = st->prev;
    pthread_cond_broadcast(&s->settled);
    pthread_mutex_unlock(&s->lock);
    // After this the Swift side no longer calls shutter_web_stream_wake with `st`.
    st->release(st->ctx);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

void shutter_web_stream_wake(shutter_web_stream *st) {
    pthread_mutex_lock(&st->lock);
    if (st->suspended) {
        st->suspended = 0;
        MHD_resume_connection(st->connection);
    } else {
        st->woken = 1;
    }
    pthread_mutex_unlock(&st->lock);
}

static void wake_all_streams(shutter_web_server *s) {
    pthread_mutex_lock(&s->lock);
    for (struct shutter_web_stream *st = s->streams; st; st = st->next) {
        pthread_mutex_lock(&st->lock);
        if (st->suspended) { st->suspended = 0; MHD_resume_connection(st->connection); }
        pthread_mutex_unlock(&st->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

static void *ticker_main(void *arg) {
    shutter_web_server *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += 1;
        pthread_cond_timedwait(&s->tick, &s->lock, &t);
        if (s->stopping) break;
        pthread_mutex_unlock(&s->lock);
        wake_all_streams(s);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/// Percent-decoding for paths and query arguments, as MHD's own, except that
/// "%00" stays as it is: a decoded NUL would end the C string early and make
/// "/files/1000001%00.txt" name /files/1000001.
static size_t unescape(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls; (void)c;
    char *w = s;
    for (const char *r = s; *r; ) {
        int hi, lo;
        if (r[0] == '%' && r[1] && r[2] && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0 && (hi | lo) != 0) {
            *w++ = (char)(hi * 16 + lo);
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)connection; (void)toe;
    shutter_web_server *s = cls;
    struct pending *p = *con_cls;
    if (p) {
        if (p->in_flight) {
            pthread_mutex_lock(&s->lock);
            s->replies_in_flight--;
            pthread_cond_broadcast(&s->settled);
            pthread_mutex_unlock(&s->lock);
        }
        if (p->ex) {
            if (p->ex->response) MHD_destroy_response(p->ex->response);
            free(p->ex);
        }
        free(p->body);
        free(p);
    }
    *con_cls = NULL;
}

shutter_web_server *shutter_web_start(const shutter_web_options *o, shutter_web_handler handler, void *ctx,
                                      char *err, size_t errlen) {
    shutter_web_server *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, errlen, "out of memory"); return NULL; }
    s->handler = handler;
    s->ctx = ctx;
    s->max_body = o->max_body;
    s->soft_per_ip = o->per_ip_limit;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->tick, NULL);
    pthread_cond_init(&s->settled, NULL);
    // One thread (epoll) for every socket; the handlers, which may wait for the camera,
    // run on the workers while their connection is parked.
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;

    struct MHD_OptionItem opts[20];
    int n = 0;
    struct sockaddr_storage addr;
    memset(&addr, 0, sizeof addr);
    if (o->listen_fd >= 0) {
        int domain = 0;
        socklen_t dl = sizeof domain;
        // 0.9.75 does not derive IPv6 from the socket (1.0.1 does): say so for AF_INET6.
        if (getsockopt(o->listen_fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) == 0 && domain == AF_INET6)
            flags |= MHD_USE_IPv6;
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, o->listen_fd, NULL};
    } else {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&addr;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&addr;
        if (inet_pton(AF_INET, o->host, &v4->sin_addr) == 1) {
            v4->sin_family = AF_INET;
            v4->sin_port = htons(o->port);
        } else if (inet_pton(AF_INET6, o->host, &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(o->port);
            flags |= MHD_USE_IPv6;
        } else {
            snprintf(err, errlen, "\"%s\" is not a numeric IPv4 or IPv6 address", o->host);
            free(s);
            return NULL;
        }
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &addr};
    }
    if (o->tls_cert_pem && o->tls_key_pem) {
        s->cert = strdup(o->tls_cert_pem);
        s->key = strdup(o->tls_key_pem);
        s->tls = 1;
        flags |= MHD_USE_TLS;
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert};
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, s->key};
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls_priorities};
    }
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, o->connection_limit, NULL};
    // MHD resets connections past its own per-address limit at accept: kept at twice
    // the soft limit (past which requests get 503), so only a flood meets it.
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, 2 * o->per_ip_limit, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_seconds, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)o->memory_limit, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

    errno = 0;
    s->daemon = MHD_start_daemon(flags, o->port, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!s->daemon) {
        int e = errno;
        snprintf(err, errlen, "libmicrohttpd did not start%s%s", e ? ": " : "", e ? strerror(e) : "");
        free(s->cert); free(s->key); free(s);
        return NULL;
    }
    unsigned workers = o->workers == 0 ? 4 : (o->workers > MAX_WORKERS ? MAX_WORKERS : o->workers);
    for (unsigned i = 0; i < workers; i++)
        if (pthread_create(&s->workers[s->worker_count], NULL, worker_main, s) == 0) s->worker_count++;
    s->ticker_started = pthread_create(&s->ticker, NULL, ticker_main, s) == 0;
    if (s->worker_count == 0 || !s->ticker_started) {
        snprintf(err, errlen, "could not start the web server's threads");
        shutter_web_stop(s);
        return NULL;
    }
    return s;
}

unsigned short shutter_web_port(const shutter_web_server *s) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (info && info->port) return info->port;
    // 0.9.75 leaves the port 0 for a socket it was given: ask the socket.
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    if (!info || getsockname(info->listen_fd, (struct sockaddr *)&a, &len) != 0) return 0;
    if (a.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    if (a.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&a)->sin_port);
    return 0;
}

void shutter_web_stop(shutter_web_server *s) {
    if (!s) return;
    // No new work; queued requests are answered 503 by the workers, running ones
    // finish; parked streams wake and end (MHD must have no parked connection at stop).
    pthread_mutex_lock(&s->lock);
    __atomic_store_n(&s->stopping, 1, __ATOMIC_SEQ_CST);
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->tick);
    pthread_mutex_unlock(&s->lock);
    for (unsigned i = 0; i < s->worker_count; i++) pthread_join(s->workers[i], NULL);
    if (s->ticker_started) pthread_join(s->ticker, NULL);
    wake_all_streams(s);
    // The answered requests' replies go out and the streams end (MHD's thread does
    // both); a client that reads nothing is not waited for past 3 s.
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3;
    pthread_mutex_lock(&s->lock);
    while ((s->replies_in_flight > 0 || s->streams) &&
           pthread_cond_timedwait(&s->settled, &s->lock, &until) == 0) {}
    pthread_mutex_unlock(&s->lock);
    if (s->daemon) MHD_stop_daemon(s->daemon);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->tick);
    pthread_cond_destroy(&s->settled);
    pthread_mutex_destroy(&s->lock);
    free(s->cert); free(s->key); free(s);
}

const char *shutter_web_method(const shutter_web_exchange *ex) { return ex->method; }
const char *shutter_web_url(const shutter_web_exchange *ex) { return ex->url; }
const char *shutter_web_header(const shutter_web_exchange *ex, const char *name) {
    return MHD_lookup_connection_value(ex->connection, MHD_HEADER_KIND, name);
}
const char *shutter_web_query(const shutter_web_exchange *ex, const char *name) {
    return MHD_lookup_connection_value(ex->connection, MHD_GET_ARGUMENT_KIND, name);
}
const char *shutter_web_client(const shutter_web_exchange *ex) { return ex->client; }
const void *shutter_web_body(const shutter_web_exchange *ex, size_t *length) {
    *length = ex->pending->length;
    return ex->pending->body ? ex->pending->body : "";
}
int shutter_web_is_tls(const shutter_web_exchange *ex) { return ex->server->tls; }

static void set_reply(shutter_web_exchange *ex, unsigned status, const char *content_type, struct MHD_Response *r) {
    if (ex->response) MHD_destroy_response(ex->response);
    ex->response = r;
    ex->status = status;
    if (r && content_type) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
}

void shutter_web_reply_bytes(shutter_web_exchange *ex, unsigned status, const char *content_type,
                             const void *data, size_t length) {
    set_reply(ex, status, content_type,
              MHD_create_response_from_buffer(length, (void *)data, MHD_RESPMEM_MUST_COPY));
}

int shutter_web_reply_file(shutter_web_exchange *ex, unsigned status, const char *content_type,
                           int fd, uint64_t offset, uint64_t length) {
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(length, fd, offset);
    if (!r) { close(fd); return 0; }
    set_reply(ex, status, content_type, r);
    return 1;
}

shutter_web_stream *shutter_web_reply_stream(shutter_web_exchange *ex, unsigned status, const char *content_type,
                                             shutter_web_reader reader, void *ctx, shutter_web_reader_free release) {
    struct shutter_web_stream *st = calloc(1, sizeof *st);
    if (!st) { release(ctx); return NULL; }
    *st = (struct shutter_web_stream){.server = ex->server, .connection = ex->connection, .reader = reader,
                                      .release = release, .ctx = ctx};
    pthread_mutex_init(&st->lock, NULL);
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, st, stream_free);
    if (!r) {
        release(ctx);
        pthread_mutex_destroy(&st->lock);
        free(st);
        return NULL;
    }
    shutter_web_server *s = ex->server;
    pthread_mutex_lock(&s->lock);
    st->next = s->streams;
    if (s->streams) s->streams->prev = st;
    s->streams = st;
    pthread_mutex_unlock(&s->lock);
    set_reply(ex, status, content_type, r);
    return st;
}

void shutter_web_add_header(shutter_web_exchange *ex, const char *name, const char *value) {
    if (ex->response) MHD_add_response_header(ex->response, name, value);
}
