// SPDX-License-Identifier: BSD-2-Clause
// The live RTSP server: one shared media (appsrc → rtph264pay, and appsrc → avenc_aac →
// rtpmp4gpay when the microphone runs) that every viewer plays, on a GLib main loop of
// its own thread. The shim accepts connections itself (bounds per address and in all, a
// pause when the process is out of descriptors) and hands them to the server. See
// shutter_rtsp.h.
#include "shutter_rtsp.h"

#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <gio/gio.h>
#include <linux/sockios.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

// What an appsrc may hold before the stream counts as behind: ~2 s of 1080p at 8 Mbit/s.
#define VIDEO_QUEUE_BYTES (2u << 20)
#define AUDIO_QUEUE_BYTES (256u << 10)

struct shutter_rtsp {
    shutter_rtsp_config cfg;
    char *path;
    GMainContext *context;
    GMainLoop *loop;
    GThread *thread;
    GstRTSPServer *server;
    GstRTSPMediaFactory *factory;
    GstRTSPAuth *auth;
    GstRTSPToken *token;
    GSource *stall_timer;
    int port;
    GSocket *listener;
    GSource *accept_source;   // NULL while accepting is paused (no descriptor left)
    GHashTable *per_address;  // peer address → its open connections (under lock)
    GList *callers;           // connections not yet handed to the library (the server's thread)
    int max_per_address, max_connections;
    gint64 out_of_files_said; // when the log line about descriptors was last written (µs, 0 never)
    GMutex lock;              // guards everything below
    GPtrArray *outlets;       // one per prepared media (outlet *), each fed every frame
    int audio_rate, audio_channels;
    shutter_rtsp_stats stats;
};

// A media's sources. Every URL maps to one shared media (shutter_factory_gen_key), but a
// media being unprepared while the next is made, or one made by a request without a
// DESCRIBE, are media too: each gets the frames until it is unprepared, so no client can
// take the stream from another.
typedef struct {
    GstRTSPMedia *media;      // not owned: removed at its "unprepared"
    GstElement *video_src, *audio_src;
    int need_key;
    GstClockTime audio_next;  // running time of the next sample (GST_CLOCK_TIME_NONE: from the clock)
} outlet;

static void outlet_free(gpointer p) {
    outlet *o = p;
    g_clear_object(&o->video_src);
    g_clear_object(&o->audio_src);
    g_free(o);
}

static void say(shutter_rtsp *s, int priority, const char *message) {
    if (s->cfg.log) s->cfg.log(s->cfg.check_context, priority, message);
}

// Connections one address may hold (an NVR's streams and probes), and all peers together.
static int max_connections_per_address(int max_viewers) { return (max_viewers > 0 ? max_viewers : 1) + 4; }
static int max_connections(int max_viewers) { return 4 * (max_viewers > 0 ? max_viewers : 1) + 16; }

// MARK: authentication: a Basic password the owner accepts (a web token or the page's password)

typedef struct {
    GstRTSPAuth parent;
    shutter_rtsp *owner;
} ShutterRTSPAuth;

typedef struct {
    GstRTSPAuthClass parent_class;
} ShutterRTSPAuthClass;

G_DEFINE_TYPE(ShutterRTSPAuth, shutter_rtsp_auth, GST_TYPE_RTSP_AUTH)

static int basic_accepted(shutter_rtsp *s, const char *value, const char *address);

static gboolean shutter_rtsp_auth_authenticate(GstRTSPAuth *auth, GstRTSPContext *ctx) {
    shutter_rtsp *s = ((ShutterRTSPAuth *)auth)->owner;
    gchar *value = NULL;
    if (gst_rtsp_message_get_header(ctx->request, GST_RTSP_HDR_AUTHORIZATION, &value, 0) != GST_RTSP_OK || !value)
        return FALSE;  // asked again with WWW-Authenticate: Basic
    const gchar *ip = ctx->conn ? gst_rtsp_connection_get_ip(ctx->conn) : NULL;
    int ok = basic_accepted(s, value, ip);
    if (!ok) {
        g_mutex_lock(&s->lock);
        s->stats.refused++;
        g_mutex_unlock(&s->lock);
        return FALSE;
    }
    ctx->token = s->token;  // borrowed, as GstRTSPAuth's own Basic table lends its tokens
    return TRUE;
}

static void shutter_rtsp_auth_class_init(ShutterRTSPAuthClass *klass) {
    GST_RTSP_AUTH_CLASS(klass)->authenticate = shutter_rtsp_auth_authenticate;
}

static void shutter_rtsp_auth_init(ShutterRTSPAuth *self) { self->owner = NULL; }

// MARK: the media

// One media for every URL under the mount (`/live`, `/live?x=1`, a SETUP's `/live/stream=0`):
// the factory's own key is the whole URL, which made a media per URL.
typedef struct {
    GstRTSPMediaFactory parent;
} ShutterFactory;

typedef struct {
    GstRTSPMediaFactoryClass parent_class;
} ShutterFactoryClass;

G_DEFINE_TYPE(ShutterFactory, shutter_factory, GST_TYPE_RTSP_MEDIA_FACTORY)

static gchar *shutter_factory_gen_key(GstRTSPMediaFactory *factory, const GstRTSPUrl *url) {
    (void)factory;
    (void)url;
    return g_strdup("live");
}

static void shutter_factory_class_init(ShutterFactoryClass *klass) {
    GST_RTSP_MEDIA_FACTORY_CLASS(klass)->gen_key = shutter_factory_gen_key;
}

static void shutter_factory_init(ShutterFactory *self) { (void)self; }

static gchar *launch_line(int rate, int channels) {
    const char *video =
        "appsrc name=video is-live=true do-timestamp=true format=time "
        "caps=video/x-h264,stream-format=byte-stream,alignment=au ! rtph264pay name=pay0 pt=96 config-interval=0";
    if (channels <= 0) return g_strdup_printf("( %s )", video);
    return g_strdup_printf("( %s appsrc name=audio is-live=true format=time "
                           "caps=audio/x-raw,format=S16LE,layout=interleaved,rate=%d,channels=%d ! audioconvert ! "
                           "avenc_aac ! rtpmp4gpay name=pay1 pt=97 )",
                           video, rate, channels);
}

// The last media gone (its pipeline, threads and pools freed): the free pages go back to
// the kernel, so a camera whose viewers come and go stays at its size.
static gboolean trim_memory(gpointer user) {
    (void)user;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    return G_SOURCE_REMOVE;
}

static void media_unprepared(GstRTSPMedia *media, gpointer user) {
    shutter_rtsp *s = user;
    g_mutex_lock(&s->lock);
    for (guint i = 0; i < s->outlets->len; i++) {
        outlet *o = g_ptr_array_index(s->outlets, i);
        if (o->media == media) {
            g_ptr_array_remove_index(s->outlets, i);
            break;
        }
    }
    int none = s->outlets->len == 0;
    g_mutex_unlock(&s->lock);
    if (none) {
        // After the unprepare has finished (this runs inside it), on the server's thread.
        GSource *later = g_timeout_source_new(500);
        g_source_set_callback(later, trim_memory, NULL, NULL);
        g_source_attach(later, s->context);
        g_source_unref(later);
    }
}

static void media_configure(GstRTSPMediaFactory *factory, GstRTSPMedia *media, gpointer user) {
    (void)factory;
    shutter_rtsp *s = user;
    GstElement *bin = gst_rtsp_media_get_element(media);
    outlet *o = g_new0(outlet, 1);
    o->media = media;
    o->video_src = gst_bin_get_by_name_recurse_up(GST_BIN(bin), "video");
    o->audio_src = gst_bin_get_by_name_recurse_up(GST_BIN(bin), "audio");
    o->need_key = 1;
    o->audio_next = GST_CLOCK_TIME_NONE;
    gst_object_unref(bin);
    g_signal_connect(media, "unprepared", G_CALLBACK(media_unprepared), s);
    g_mutex_lock(&s->lock);
    g_ptr_array_add(s->outlets, o);
    g_mutex_unlock(&s->lock);
}

// MARK: connections

// Per connection handed to the library, kept on its client: when it came, its socket
// (taken at the start: the connection's own accessors assert once it is closed), its
// sessions, and what the stall check saw.
typedef struct {
    gchar *address;
    int fd;
    gint64 since;             // monotonic µs at accept
    int closing;              // closed here (its "closed" may come later)
    int closed;
    int last_outq;
    int stalled;
    int had_session;
    GPtrArray *sessions;      // ids of the sessions it made (the client forgets them before "closed")
} peer;

static void peer_free(gpointer p) {
    peer *st = p;
    g_free(st->address);
    g_ptr_array_unref(st->sessions);
    g_free(st);
}

// Connections are counted from their accept (on the server's thread) until the front door
// or the client closes them (the client on the library's client thread): under the lock.
// 1: counted; 0: over a bound, turned away.
static int count_in(shutter_rtsp *s, const gchar *address) {
    g_mutex_lock(&s->lock);
    int from_address = GPOINTER_TO_INT(g_hash_table_lookup(s->per_address, address));
    int ok = from_address < s->max_per_address && s->stats.connections < s->max_connections;
    if (ok) {
        g_hash_table_insert(s->per_address, g_strdup(address), GINT_TO_POINTER(from_address + 1));
        s->stats.connections++;
    } else {
        s->stats.turned_away++;
    }
    g_mutex_unlock(&s->lock);
    return ok;
}

static void uncount_address(shutter_rtsp *s, const gchar *address) {
    g_mutex_lock(&s->lock);
    int n = GPOINTER_TO_INT(g_hash_table_lookup(s->per_address, address)) - 1;
    if (n > 0) g_hash_table_insert(s->per_address, g_strdup(address), GINT_TO_POINTER(n));
    else g_hash_table_remove(s->per_address, address);
    s->stats.connections--;
    g_mutex_unlock(&s->lock);
}

// MARK: the front door: requests before authentication

// Until a peer's request carries a password the owner accepts, the shim answers it itself
// from a buffer of FRONT_DOOR_BYTES: OPTIONS as the library would, anything else 401 (413
// for a body over SHUTTER_RTSP_BODY_LIMIT, 400 for a request that does not fit). The
// library's parser keeps every header line of a request however many there are (a peer
// with one answered request could make it hold hundreds of MB), so a stranger never
// reaches it. The request that authenticates, and whatever came after it, is handed over
// with the connection (its initial buffer); with live.rtsp.open, the first request is.
#define FRONT_DOOR_BYTES 8192

typedef struct {
    shutter_rtsp *owner;
    GSocket *sock;
    GSource *source;
    gchar *address;
    int port;
    gint64 since;
    int answered;             // a request was answered
    gsize len;
    char buf[FRONT_DOOR_BYTES + 1];
} caller;

static void caller_free(caller *c, int close_socket) {
    shutter_rtsp *s = c->owner;
    s->callers = g_list_remove(s->callers, c);
    if (c->source) {
        g_source_destroy(c->source);
        g_source_unref(c->source);
    }
    if (close_socket) {
        g_socket_close(c->sock, NULL);
        uncount_address(s, c->address);
    }
    g_object_unref(c->sock);
    g_free(c->address);
    g_free(c);
}

static void caller_reply(caller *c, const char *status, const char *cseq, const char *extra) {
    char reply[512];
    int n = snprintf(reply, sizeof reply, "RTSP/1.0 %s\r\nCSeq: %s\r\n%sServer: GStreamer RTSP server\r\n\r\n", status,
                     cseq, extra);
    if (n > 0) g_socket_send(c->sock, reply, (gsize)MIN(n, (int)sizeof reply - 1), NULL, NULL);
    c->answered = 1;
}

// The value of header `name` in the request's head (its first `head` bytes), copied into
// `out` (NUL-terminated, cut to `size`); 0 when absent.
static int header_value(const char *req, gsize head, const char *name, char *out, gsize size) {
    gsize nlen = strlen(name);
    for (const char *line = memchr(req, '\n', head); line && (gsize)(line - req) < head;
         line = memchr(line + 1, '\n', head - (gsize)(line + 1 - req))) {
        const char *p = line + 1;
        if ((gsize)(p - req) + nlen + 1 > head || g_ascii_strncasecmp(p, name, nlen) != 0 || p[nlen] != ':') continue;
        p += nlen + 1;
        while (*p == ' ' || *p == '\t') p++;
        const char *end = p;
        while ((gsize)(end - req) < head && *end != '\r' && *end != '\n') end++;
        gsize n = MIN((gsize)(end - p), size - 1);
        memcpy(out, p, n);
        out[n] = 0;
        return 1;
    }
    return 0;
}

// Whether an Authorization header's value is HTTP Basic with a password the owner accepts
// from `address`; the password is all that was decoded after the first colon, NULs and all.
static int basic_accepted(shutter_rtsp *s, const char *value, const char *address) {
    if (g_ascii_strncasecmp(value, "Basic ", 6) != 0 || !s->cfg.check) return 0;
    gsize len = 0;
    guchar *raw = g_base64_decode(value + 6, &len);
    const guchar *colon = raw ? memchr(raw, ':', len) : NULL;
    int ok = 0;
    if (colon) {
        gsize plen = len - (gsize)(colon + 1 - raw);
        gchar *password = g_malloc(plen + 1);
        memcpy(password, colon + 1, plen);
        password[plen] = 0;
        ok = s->cfg.check(s->cfg.check_context, password, plen, address ? address : "");
        memset(password, 0, plen);
        g_free(password);
    }
    if (raw) memset(raw, 0, len);
    g_free(raw);
    return ok;
}

// One complete request at the start of the buffer: 1 handled (consumed, go on), 0 the
// connection was handed over or closed (the caller is freed).
static int caller_request(caller *c, gsize head, gsize total) {
    shutter_rtsp *s = c->owner;
    char cseq[16] = "0", auth[1024] = "";
    if (header_value(c->buf, head, "CSeq", cseq, sizeof cseq)) {
        for (char *p = cseq; *p; p++)
            if (!g_ascii_isdigit(*p)) *p = 0;  // echoed: digits only
    }
    int http = strncmp(c->buf, "GET ", 4) == 0 || strncmp(c->buf, "POST ", 5) == 0;
    int has_auth = header_value(c->buf, head, "Authorization", auth, sizeof auth);
    if (memchr(c->buf, 0, c->len)) {  // the handed-over buffer is a C string
        caller_reply(c, "400 Bad Request", cseq, "");
        caller_free(c, 1);
        return 0;
    }
    if (http) {  // RTSP over HTTP is not offered (the tunnel holds a viewer's place; see client_connected)
        static const char no[] = "HTTP/1.0 501 Not Implemented\r\nContent-Length: 0\r\n\r\n";
        g_socket_send(c->sock, no, sizeof no - 1, NULL, NULL);
        caller_free(c, 1);
        return 0;
    }
    if (s->cfg.open || (has_auth && basic_accepted(s, auth, c->address))) {
        c->buf[c->len] = 0;
        GSocket *sock = g_object_ref(c->sock);
        int port = c->port;
        gchar *address = g_strdup(c->address);
        gchar *initial = g_strdup(c->buf);
        caller_free(c, 0);  // the socket and its place in the counts go to the client
        if (!gst_rtsp_server_transfer_connection(s->server, sock, address, port, initial)) uncount_address(s, address);
        g_free(initial);
        g_free(address);
        return 0;
    }
    if (has_auth) {
        g_mutex_lock(&s->lock);
        s->stats.refused++;
        g_mutex_unlock(&s->lock);
    }
    if (strncmp(c->buf, "OPTIONS ", 8) == 0)
        caller_reply(c, "200 OK", cseq,
                     "Public: OPTIONS, DESCRIBE, ANNOUNCE, GET_PARAMETER, PAUSE, PLAY, RECORD, SETUP, SET_PARAMETER, "
                     "TEARDOWN\r\n");
    else
        caller_reply(c, "401 Unauthorized", cseq, "WWW-Authenticate: Basic realm=\"GStreamer RTSP Server\"\r\n");
    memmove(c->buf, c->buf + total, c->len - total);
    c->len -= total;
    return 1;
}

static gboolean caller_readable(GSocket *sock, GIOCondition condition, gpointer user) {
    (void)condition;
    caller *c = user;
    for (;;) {
        if (c->len < FRONT_DOOR_BYTES) {
            GError *error = NULL;
            gssize n = g_socket_receive(sock, c->buf + c->len, FRONT_DOOR_BYTES - c->len, NULL, &error);
            if (n < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
                g_error_free(error);
                return G_SOURCE_CONTINUE;
            }
            if (error) g_error_free(error);
            if (n <= 0) {  // the peer left, or the connection failed
                caller_free(c, 1);
                return G_SOURCE_REMOVE;
            }
            c->len += (gsize)n;
        }
        c->buf[c->len] = 0;
        // Requests complete in the buffer, in order (leading blank lines are skipped).
        for (;;) {
            gsize skip = 0;
            while (skip < c->len && (c->buf[skip] == '\r' || c->buf[skip] == '\n')) skip++;
            if (skip) {
                memmove(c->buf, c->buf + skip, c->len - skip);
                c->len -= skip;
                c->buf[c->len] = 0;
            }
            char *end = g_strstr_len(c->buf, (gssize)c->len, "\r\n\r\n");
            if (!end) break;
            gsize head = (gsize)(end - c->buf) + 4;
            char length[24] = "0";
            header_value(c->buf, head, "Content-Length", length, sizeof length);
            gint64 body = g_ascii_strtoll(length, NULL, 10);
            if (body < 0 || body > SHUTTER_RTSP_BODY_LIMIT) {
                char cseq[16] = "0";
                header_value(c->buf, head, "CSeq", cseq, sizeof cseq);
                for (char *p = cseq; *p; p++)
                    if (!g_ascii_isdigit(*p)) *p = 0;
                caller_reply(c, "413 Request Entity Too Large", cseq, "");
                caller_free(c, 1);
                return G_SOURCE_REMOVE;
            }
            if (c->len < head + (gsize)body) break;
            if (!caller_request(c, head, head + (gsize)body)) return G_SOURCE_REMOVE;
        }
        if (c->len >= FRONT_DOOR_BYTES) {  // no request fits: not one a viewer sends
            caller_reply(c, "400 Bad Request", "0", "");
            caller_free(c, 1);
            return G_SOURCE_REMOVE;
        }
    }
}

// A caller with no request answered in SHUTTER_RTSP_FIRST_REQUEST_SECONDS, or not
// authenticated in SHUTTER_RTSP_SESSIONLESS_SECONDS, is closed (on the tick).
static void check_callers(shutter_rtsp *s, gint64 now) {
    GList *l = s->callers;
    while (l) {
        caller *c = l->data;
        l = l->next;
        gint64 age = (now - c->since) / G_USEC_PER_SEC;
        if ((!c->answered && age >= SHUTTER_RTSP_FIRST_REQUEST_SECONDS) || age >= SHUTTER_RTSP_SESSIONLESS_SECONDS) {
            g_mutex_lock(&s->lock);
            s->stats.idle_closed++;
            g_mutex_unlock(&s->lock);
            caller_free(c, 1);
        }
    }
}

// MARK: viewers that stop reading, and peers that hold a connection for nothing

// Each second, per connection: its unsent bytes (SIOCOUTQ) not zero and never shrinking mean
// it takes less than the stream adds, or nothing (a reader drains its queue now and then,
// and the queue grows to the socket's buffer, autotuned to MBs, when it reads nothing); a
// connection that had a session and has none left (it timed out: a viewer that stops
// reading sends no keep-alive either) is no viewer any more. Either for stall_seconds:
// closed, and what it held is freed. A connection that logged in but set up no session
// within SHUTTER_RTSP_SESSIONLESS_SECONDS is closed too, as the front door closes callers
// (check_callers): nobody holds a descriptor by connecting and waiting.
static gboolean check_stalls(gpointer user) {
    shutter_rtsp *s = user;
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    gst_rtsp_session_pool_cleanup(pool);
    g_object_unref(pool);
    gint64 now = g_get_monotonic_time();
    check_callers(s, now);
    GList *clients = gst_rtsp_server_client_filter(s->server, NULL, NULL);
    for (GList *l = clients; l; l = l->next) {
        GstRTSPClient *c = l->data;
        peer *st = g_object_get_data(G_OBJECT(c), "shutter-peer");
        if (!st || st->closing || st->closed) continue;
        GList *sessions = gst_rtsp_client_session_filter(c, NULL, NULL);
        int has_session = sessions != NULL;
        g_list_free_full(sessions, g_object_unref);
        gint64 age = (now - st->since) / G_USEC_PER_SEC;
        if (!st->had_session && !has_session && age >= SHUTTER_RTSP_SESSIONLESS_SECONDS) {
            g_mutex_lock(&s->lock);
            s->stats.idle_closed++;
            g_mutex_unlock(&s->lock);
            st->closing = 1;
            gst_rtsp_client_close(c);
            continue;
        }
        int outq = 0;
        if (ioctl(st->fd, SIOCOUTQ, &outq) != 0) outq = 0;
        int stuck = (outq > 0 && outq >= st->last_outq) || (st->had_session && !has_session);
        st->stalled = stuck ? st->stalled + 1 : 0;
        st->last_outq = outq;
        st->had_session |= has_session;
        if (st->stalled >= s->cfg.stall_seconds) {
            g_mutex_lock(&s->lock);
            s->stats.stalled_closed++;
            g_mutex_unlock(&s->lock);
            st->closing = 1;
            gst_rtsp_client_close(c);
        }
    }
    g_list_free_full(clients, g_object_unref);
    return G_SOURCE_CONTINUE;
}

// MARK: viewers that go away

// A viewer whose connection closed without a TEARDOWN (killed, unplugged, or closed here
// for not reading) leaves its session behind, holding a viewer's place, until the session
// times out: RTSP's default 60 s is shortened to SESSION_SECONDS (clients keep a session
// alive with RTCP receiver reports or GET_PARAMETER well within it), and expired sessions
// are swept each second (check_stalls).
#define SESSION_SECONDS 10

static void session_made(GstRTSPClient *client, GstRTSPSession *session, gpointer user) {
    (void)user;
    gst_rtsp_session_set_timeout(session, SESSION_SECONDS);
    peer *st = g_object_get_data(G_OBJECT(client), "shutter-peer");
    if (st) g_ptr_array_add(st->sessions, g_strdup(gst_rtsp_session_get_sessionid(session)));
}

// A connection that closes takes its sessions along at once, so a viewer that reconnects
// finds its place free. (The client drops them from its own list before "closed" is
// emitted, but the pool would keep them until they time out: they are removed by id.)
static void client_closed(GstRTSPClient *client, gpointer user) {
    shutter_rtsp *s = user;
    peer *st = g_object_get_data(G_OBJECT(client), "shutter-peer");
    if (!st) return;
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    for (guint i = 0; i < st->sessions->len; i++) {
        GstRTSPSession *session = gst_rtsp_session_pool_find(pool, g_ptr_array_index(st->sessions, i));
        if (!session) continue;  // torn down already
        gst_rtsp_session_pool_remove(pool, session);
        g_object_unref(session);
    }
    g_ptr_array_set_size(st->sessions, 0);
    g_object_unref(pool);
    g_mutex_lock(&s->lock);
    int first = !st->closed;
    st->closed = 1;
    g_mutex_unlock(&s->lock);
    if (first) uncount_address(s, st->address);
}

static void client_connected(GstRTSPServer *server, GstRTSPClient *client, gpointer user) {
    (void)server;
    GstRTSPConnection *conn = gst_rtsp_client_get_connection(client);
    peer *st = g_new0(peer, 1);
    st->address = g_strdup(conn ? gst_rtsp_connection_get_ip(conn) : "");
    GSocket *sock = conn ? gst_rtsp_connection_get_read_socket(conn) : NULL;
    st->fd = sock ? g_socket_get_fd(sock) : -1;
    st->since = g_get_monotonic_time();
    st->sessions = g_ptr_array_new_with_free_func(g_free);
    g_object_set_data_full(G_OBJECT(client), "shutter-peer", st, peer_free);  // counted at its accept
    // A body (ANNOUNCE, SET_PARAMETER) beyond a few KB is refused before it is read.
    if (conn) gst_rtsp_connection_set_content_length_limit(conn, SHUTTER_RTSP_BODY_LIMIT);
    // HTTP requests on a viewer's connection are parsed and ignored, never a tunnel: GStreamer's
    // tunnel merge (two connections, one cookie) asserted in GLib and left clients holding
    // viewers' places (LiveEdgeTests' tunnel scenario).
    if (conn) gst_rtsp_connection_set_http_mode(conn, TRUE);
    g_signal_connect(client, "new-session", G_CALLBACK(session_made), user);
    g_signal_connect(client, "closed", G_CALLBACK(client_closed), user);
}

// MARK: accepting

static gboolean on_accept(GSocket *listener, GIOCondition condition, gpointer user);

static gboolean resume_accepting(gpointer user) {
    shutter_rtsp *s = user;
    s->accept_source = g_socket_create_source(s->listener, G_IO_IN, NULL);
    g_source_set_callback(s->accept_source, (GSourceFunc)(void (*)(void))on_accept, s, NULL);
    g_source_attach(s->accept_source, s->context);
    return G_SOURCE_REMOVE;
}

// Accepts what is waiting. A peer over its bound, or over the bound in all, is closed at
// once. Out of descriptors (EMFILE, ENFILE), accepting pauses for a second (said at most
// once a minute):
// the pending connections wait in the kernel's backlog instead of spinning this thread.
static gboolean on_accept(GSocket *listener, GIOCondition condition, gpointer user) {
    (void)condition;
    shutter_rtsp *s = user;
    for (int i = 0; i < 64; i++) {
        GError *error = NULL;
        GSocket *sock = g_socket_accept(listener, NULL, &error);
        if (!sock) {
            int out_of_files = error && error->domain == G_IO_ERROR && error->code == G_IO_ERROR_TOO_MANY_OPEN_FILES;
            int would_block = error && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
            if (out_of_files) {
                gint64 now = g_get_monotonic_time();
                if (!s->out_of_files_said || now - s->out_of_files_said > 60 * G_USEC_PER_SEC) {
                    char msg[256];
                    snprintf(msg, sizeof msg, "RTSP: not accepting for now: %s (the process's open-file limit is "
                             "reached; raise LimitNOFILE or lower live.maxViewers); trying again each second",
                             error->message);
                    say(s, 4, msg);
                    s->out_of_files_said = now;
                }
            }
            if (error) g_error_free(error);
            (void)would_block;  // nothing waiting, or a peer that left before it was accepted
            if (!out_of_files) return G_SOURCE_CONTINUE;
            g_source_unref(s->accept_source);
            s->accept_source = NULL;
            GSource *later = g_timeout_source_new_seconds(1);
            g_source_set_callback(later, resume_accepting, s, NULL);
            g_source_attach(later, s->context);
            g_source_unref(later);
            return G_SOURCE_REMOVE;
        }
        GSocketAddress *remote = g_socket_get_remote_address(sock, NULL);
        gchar *ip = NULL;
        int port = 0;
        if (remote && G_IS_INET_SOCKET_ADDRESS(remote)) {
            ip = g_inet_address_to_string(g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(remote)));
            port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(remote));
        }
        if (remote) g_object_unref(remote);
        if (!ip || !count_in(s, ip)) {
            g_socket_close(sock, NULL);
            g_object_unref(sock);
            g_free(ip);
            continue;
        }
        caller *c = g_new0(caller, 1);
        c->owner = s;
        c->sock = sock;
        c->address = ip;
        c->port = port;
        c->since = g_get_monotonic_time();
        g_socket_set_blocking(sock, FALSE);
        c->source = g_socket_create_source(sock, G_IO_IN, NULL);
        g_source_set_callback(c->source, (GSourceFunc)(void (*)(void))caller_readable, c, NULL);
        g_source_attach(c->source, s->context);
        s->callers = g_list_prepend(s->callers, c);
    }
    return G_SOURCE_CONTINUE;
}

// MARK: the loop

static gpointer run_loop(gpointer user) {
    shutter_rtsp *s = user;
    g_main_context_push_thread_default(s->context);
    g_main_loop_run(s->loop);
    g_main_context_pop_thread_default(s->context);
    return NULL;
}

// The RTSP library warns about what peers send ("unknown transport field ..."): a stranger
// could fill the journal with those. They are dropped; criticals (our own mistakes) stay.
static void quiet_peer_warnings(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user) {
    (void)domain;
    (void)level;
    (void)message;
    (void)user;
}

static gpointer init_gstreamer(gpointer unused) {
    (void)unused;
    gst_init(NULL, NULL);
    g_log_set_handler("GStreamer-RTSP", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE, quiet_peer_warnings, NULL);
    return NULL;
}

static void set_err(char *err, size_t len, const char *msg) {
    if (err && len) snprintf(err, len, "%s", msg);
}

int shutter_rtsp_start(const shutter_rtsp_config *cfg, shutter_rtsp **out, char *err, size_t errlen) {
    static GOnce once = G_ONCE_INIT;
    g_once(&once, init_gstreamer, NULL);
    *out = NULL;
    if (!cfg || !cfg->host || !cfg->path || cfg->path[0] != '/' || cfg->port < 0 || cfg->port > 65535) {
        if (cfg && cfg->listen_fd > 0) close(cfg->listen_fd);  // the server's, as on any failed start
        set_err(err, errlen, "invalid RTSP configuration");
        return -1;
    }
    GstElementFactory *pay = gst_element_factory_find("rtph264pay");
    GstElementFactory *src = gst_element_factory_find("appsrc");
    if (!pay || !src) {
        if (pay) gst_object_unref(pay);
        if (src) gst_object_unref(src);
        if (cfg->listen_fd > 0) close(cfg->listen_fd);
        set_err(err, errlen, "GStreamer lacks appsrc or rtph264pay: install gstreamer1.0-plugins-base and "
                             "gstreamer1.0-plugins-good");
        return -1;
    }
    gst_object_unref(pay);
    gst_object_unref(src);

    shutter_rtsp *s = g_new0(shutter_rtsp, 1);
    s->cfg = *cfg;
    s->cfg.host = NULL;
    s->path = g_strdup(cfg->path);
    s->cfg.path = s->path;
    if (s->cfg.stall_seconds <= 0) s->cfg.stall_seconds = 10;
    s->max_per_address = max_connections_per_address(cfg->max_viewers);
    s->max_connections = max_connections(cfg->max_viewers);
    s->per_address = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s->outlets = g_ptr_array_new_with_free_func(outlet_free);
    g_mutex_init(&s->lock);
    s->context = g_main_context_new();
    s->loop = g_main_loop_new(s->context, FALSE);

    s->server = gst_rtsp_server_new();
    gst_rtsp_server_set_address(s->server, cfg->host);
    gchar *service = g_strdup_printf("%d", cfg->port);
    gst_rtsp_server_set_service(s->server, service);
    g_free(service);
    // A burst of peers waits in the kernel to be accepted (and turned away) rather than
    // having its SYNs dropped (the library's default backlog is 5).
    gst_rtsp_server_set_backlog(s->server, s->max_connections);
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    gst_rtsp_session_pool_set_max_sessions(pool, cfg->max_viewers > 0 ? (guint)cfg->max_viewers : 1);
    g_object_unref(pool);
    g_signal_connect(s->server, "client-connected", G_CALLBACK(client_connected), s);

    s->factory = g_object_new(shutter_factory_get_type(), NULL);
    gst_rtsp_media_factory_set_shared(s->factory, TRUE);
    gchar *launch = launch_line(0, 0);
    gst_rtsp_media_factory_set_launch(s->factory, launch);
    g_free(launch);
    g_signal_connect(s->factory, "media-configure", G_CALLBACK(media_configure), s);
    if (!cfg->open) {
        ShutterRTSPAuth *auth = g_object_new(shutter_rtsp_auth_get_type(), NULL);
        auth->owner = s;
        s->auth = GST_RTSP_AUTH(auth);
        s->token = gst_rtsp_token_new(GST_RTSP_TOKEN_MEDIA_FACTORY_ROLE, G_TYPE_STRING, "viewer", NULL);
        gst_rtsp_media_factory_add_role(s->factory, "viewer", GST_RTSP_PERM_MEDIA_FACTORY_ACCESS, G_TYPE_BOOLEAN, TRUE,
                                        GST_RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, G_TYPE_BOOLEAN, TRUE, NULL);
        gst_rtsp_auth_set_supported_methods(s->auth, GST_RTSP_AUTH_BASIC);
        gst_rtsp_server_set_auth(s->server, s->auth);
    }
    GstRTSPMountPoints *mounts = gst_rtsp_server_get_mount_points(s->server);
    gst_rtsp_mount_points_add_factory(mounts, s->path, g_object_ref(s->factory));
    g_object_unref(mounts);

    // The listening socket is the server's (its address and port), the accepting ours.
    GError *error = NULL;
    if (cfg->listen_fd > 0) {
        s->listener = g_socket_new_from_fd(cfg->listen_fd, &error);
        if (s->listener) {
            g_socket_set_blocking(s->listener, FALSE);
            gst_rtsp_media_factory_set_protocols(s->factory, GST_RTSP_LOWER_TRANS_TCP);
        } else {
            char msg[320];
            snprintf(msg, sizeof msg, "cannot use the socket systemd passed: %s", error ? error->message : "unknown error");
            if (error) g_error_free(error);
            close(cfg->listen_fd);
            set_err(err, errlen, msg);
            shutter_rtsp_stop(s);
            return -1;
        }
    } else {
        s->listener = gst_rtsp_server_create_socket(s->server, NULL, &error);
    }
    if (!s->listener) {
        char msg[512];
        int denied = error && (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED) ||
                               g_error_matches(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED));
        snprintf(msg, sizeof msg, "cannot listen on %s:%d: %s%s", cfg->host, cfg->port,
                 error ? error->message : "unknown error",
                 denied ? " (this process may not use the network)"
                        : " (in use, or not an address of this machine)");
        if (error) g_error_free(error);
        set_err(err, errlen, msg);
        shutter_rtsp_stop(s);
        return -1;
    }
    GSocketAddress *local = g_socket_get_local_address(s->listener, NULL);
    s->port = local && G_IS_INET_SOCKET_ADDRESS(local) ? g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(local)) : -1;
    if (local) g_object_unref(local);
    resume_accepting(s);
    s->stall_timer = g_timeout_source_new_seconds(1);
    g_source_set_callback(s->stall_timer, check_stalls, s, NULL);
    g_source_attach(s->stall_timer, s->context);
    s->thread = g_thread_new("shutter.rtsp", run_loop, s);
    *out = s;
    return 0;
}

int shutter_rtsp_port(const shutter_rtsp *s) { return s->port; }

void shutter_rtsp_set_audio(shutter_rtsp *s, int sample_rate, int channels) {
    g_mutex_lock(&s->lock);
    int same = s->audio_rate == sample_rate && s->audio_channels == channels;
    s->audio_rate = sample_rate;
    s->audio_channels = channels;
    g_mutex_unlock(&s->lock);
    if (same) return;
    gchar *launch = launch_line(sample_rate, channels);
    gst_rtsp_media_factory_set_launch(s->factory, launch);
    g_free(launch);
}

int shutter_rtsp_watched(shutter_rtsp *s) {
    g_mutex_lock(&s->lock);
    int prepared = s->outlets->len > 0;
    g_mutex_unlock(&s->lock);
    if (prepared) return 1;
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    guint n = gst_rtsp_session_pool_get_n_sessions(pool);
    g_object_unref(pool);
    return n > 0;
}

static guint64 queued_bytes(GstElement *src) {
    guint64 level = 0;
    g_object_get(src, "current-level-bytes", &level, NULL);
    return level;
}

// Media at once: one normally; a second while one is replaced or a stranger's is made.
#define MAX_OUTLETS 16

void shutter_rtsp_push_video(shutter_rtsp *s, const uint8_t *header, size_t header_len, const uint8_t *data,
                             size_t len, int key) {
    GstElement *to[MAX_OUTLETS];
    int n = 0, dropped = 0;
    g_mutex_lock(&s->lock);
    for (guint i = 0; i < s->outlets->len && n < MAX_OUTLETS; i++) {
        outlet *o = g_ptr_array_index(s->outlets, i);
        if (!o->video_src) continue;
        if (queued_bytes(o->video_src) > VIDEO_QUEUE_BYTES) o->need_key = 1;
        if (o->need_key && !key) {
            dropped = 1;
            continue;
        }
        o->need_key = 0;
        to[n++] = gst_object_ref(o->video_src);
    }
    if (n > 0) s->stats.video_pushed++;
    else if (dropped) s->stats.video_dropped++;
    g_mutex_unlock(&s->lock);
    if (n == 0) return;
    size_t extra = (key && header) ? header_len : 0;
    GstBuffer *buf = gst_buffer_new_allocate(NULL, extra + len, NULL);
    if (extra) gst_buffer_fill(buf, 0, header, extra);
    gst_buffer_fill(buf, extra, data, len);
    if (!key) GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
    for (int i = 0; i < n; i++) {
        GstFlowReturn r;
        g_signal_emit_by_name(to[i], "push-buffer", buf, &r);  // takes its own reference
        gst_object_unref(to[i]);
    }
    gst_buffer_unref(buf);
}

// Audio times run on from the samples pushed (the push time jitters with the chunks, and
// AAC's timestamps would then step back); back to the clock when they drift from it by
// more than AUDIO_RESYNC (the microphone lost samples). Each media has its own clock times.
#define AUDIO_RESYNC (200 * GST_MSECOND)

void shutter_rtsp_push_audio(shutter_rtsp *s, const int16_t *samples, size_t count) {
    GstElement *to[MAX_OUTLETS];
    GstClockTime pts[MAX_OUTLETS];
    int n = 0;
    g_mutex_lock(&s->lock);
    int rate = s->audio_rate, channels = s->audio_channels;
    if (rate <= 0 || channels <= 0) {
        g_mutex_unlock(&s->lock);
        return;
    }
    GstClockTime duration = gst_util_uint64_scale(count / (size_t)channels, GST_SECOND, (guint64)rate);
    for (guint i = 0; i < s->outlets->len && n < MAX_OUTLETS; i++) {
        outlet *o = g_ptr_array_index(s->outlets, i);
        if (!o->audio_src || !o->video_src || o->need_key) continue;  // audio once the video started
        if (queued_bytes(o->audio_src) > AUDIO_QUEUE_BYTES) continue;
        GstClock *clock = gst_element_get_clock(o->audio_src);
        if (!clock) continue;
        GstClockTime now = gst_clock_get_time(clock) - gst_element_get_base_time(o->audio_src);
        gst_object_unref(clock);
        if (o->audio_next == GST_CLOCK_TIME_NONE || o->audio_next + AUDIO_RESYNC < now ||
            now + AUDIO_RESYNC < o->audio_next)
            o->audio_next = now;
        pts[n] = o->audio_next;
        o->audio_next += duration;
        to[n++] = gst_object_ref(o->audio_src);
    }
    if (n > 0) s->stats.audio_pushed++;
    g_mutex_unlock(&s->lock);
    if (n == 0) return;
    GstBuffer *buf = gst_buffer_new_allocate(NULL, count * sizeof(int16_t), NULL);
    gst_buffer_fill(buf, 0, samples, count * sizeof(int16_t));
    for (int i = 0; i < n; i++) {
        GstBuffer *timed = gst_buffer_copy(buf);  // shares the memory; its own times
        GST_BUFFER_PTS(timed) = pts[i];
        GST_BUFFER_DURATION(timed) = duration;
        GstFlowReturn r;
        g_signal_emit_by_name(to[i], "push-buffer", timed, &r);
        gst_buffer_unref(timed);
        gst_object_unref(to[i]);
    }
    gst_buffer_unref(buf);
}

void shutter_rtsp_get_stats(shutter_rtsp *s, shutter_rtsp_stats *out) {
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    guint n = gst_rtsp_session_pool_get_n_sessions(pool);
    g_object_unref(pool);
    g_mutex_lock(&s->lock);
    *out = s->stats;
    out->viewers = n;
    g_mutex_unlock(&s->lock);
}

static GstRTSPFilterResult close_client(GstRTSPServer *server, GstRTSPClient *client, gpointer user) {
    (void)server;
    (void)user;
    gst_rtsp_client_close(client);
    return GST_RTSP_FILTER_REMOVE;
}

static gboolean quit_loop(gpointer user) {
    shutter_rtsp *s = user;
    while (s->callers) caller_free(s->callers->data, 1);
    gst_rtsp_server_client_filter(s->server, close_client, NULL);
    g_main_loop_quit(s->loop);
    return G_SOURCE_REMOVE;
}

void shutter_rtsp_stop(shutter_rtsp *s) {
    if (!s) return;
    if (s->thread) {
        GSource *idle = g_idle_source_new();
        g_source_set_callback(idle, quit_loop, s, NULL);
        g_source_attach(idle, s->context);
        g_source_unref(idle);
        g_thread_join(s->thread);
    }
    if (s->stall_timer) {
        g_source_destroy(s->stall_timer);
        g_source_unref(s->stall_timer);
    }
    if (s->accept_source) {
        g_source_destroy(s->accept_source);
        g_source_unref(s->accept_source);
    }
    if (s->listener) {
        g_socket_close(s->listener, NULL);
        g_object_unref(s->listener);
    }
    g_mutex_lock(&s->lock);
    g_ptr_array_set_size(s->outlets, 0);
    g_mutex_unlock(&s->lock);
    g_clear_object(&s->factory);
    g_clear_object(&s->server);
    g_clear_object(&s->auth);
    if (s->token) gst_rtsp_token_unref(s->token);
    g_ptr_array_unref(s->outlets);
    g_hash_table_unref(s->per_address);
    g_main_loop_unref(s->loop);
    g_main_context_unref(s->context);
    g_mutex_clear(&s->lock);
    g_free(s->path);
    g_free(s);
}
