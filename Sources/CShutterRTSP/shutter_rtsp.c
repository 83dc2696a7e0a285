// SPDX-License-Identifier: BSD-2-Clause
// The live RTSP server: one shared media (appsrc → rtph264pay, and appsrc → avenc_aac →
// rtpmp4gpay when the microphone runs) that every viewer plays, on a GLib main loop of
// its own thread. See shutter_rtsp.h.
#include "shutter_rtsp.h"

#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>

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
    guint server_source;
    GSource *stall_timer;
    int port;
    GMutex lock;              // guards everything below
    GstRTSPMedia *media;      // the shared media now, not owned
    GstElement *video_src, *audio_src;
    int need_key;
    int audio_rate, audio_channels;
    GstClockTime audio_next;  // running time of the next sample (GST_CLOCK_TIME_NONE: from the clock)
    shutter_rtsp_stats stats;
};

// MARK: authentication: a Basic password the owner accepts (a web token or the page's password)

typedef struct {
    GstRTSPAuth parent;
    shutter_rtsp *owner;
} ShutterRTSPAuth;

typedef struct {
    GstRTSPAuthClass parent_class;
} ShutterRTSPAuthClass;

G_DEFINE_TYPE(ShutterRTSPAuth, shutter_rtsp_auth, GST_TYPE_RTSP_AUTH)

static gboolean shutter_rtsp_auth_authenticate(GstRTSPAuth *auth, GstRTSPContext *ctx) {
    shutter_rtsp *s = ((ShutterRTSPAuth *)auth)->owner;
    gchar *value = NULL;
    if (gst_rtsp_message_get_header(ctx->request, GST_RTSP_HDR_AUTHORIZATION, &value, 0) != GST_RTSP_OK || !value)
        return FALSE;  // asked again with WWW-Authenticate: Basic
    int ok = 0;
    if (g_ascii_strncasecmp(value, "Basic ", 6) == 0) {
        gsize len = 0;
        guchar *raw = g_base64_decode(value + 6, &len);
        gchar *text = g_strndup((const gchar *)raw, len);
        const gchar *colon = strchr(text, ':');
        if (colon && s->cfg.check) ok = s->cfg.check(s->cfg.check_context, colon + 1);
        memset(text, 0, len);
        memset(raw, 0, len);
        g_free(text);
        g_free(raw);
    }
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

static void media_unprepared(GstRTSPMedia *media, gpointer user) {
    shutter_rtsp *s = user;
    g_mutex_lock(&s->lock);
    if (s->media == media) {
        s->media = NULL;
        g_clear_object(&s->video_src);
        g_clear_object(&s->audio_src);
    }
    g_mutex_unlock(&s->lock);
}

static void media_configure(GstRTSPMediaFactory *factory, GstRTSPMedia *media, gpointer user) {
    (void)factory;
    shutter_rtsp *s = user;
    GstElement *bin = gst_rtsp_media_get_element(media);
    GstElement *v = gst_bin_get_by_name_recurse_up(GST_BIN(bin), "video");
    GstElement *a = gst_bin_get_by_name_recurse_up(GST_BIN(bin), "audio");
    gst_object_unref(bin);
    g_signal_connect(media, "unprepared", G_CALLBACK(media_unprepared), s);
    g_mutex_lock(&s->lock);
    g_clear_object(&s->video_src);
    g_clear_object(&s->audio_src);
    s->media = media;
    s->video_src = v;
    s->audio_src = a;
    s->need_key = 1;
    s->audio_next = GST_CLOCK_TIME_NONE;
    g_mutex_unlock(&s->lock);
}

// MARK: viewers that stop reading

// Each second, per connection: its unsent bytes (SIOCOUTQ) not zero and never shrinking mean
// it takes less than the stream adds, or nothing (a reader drains its queue now and then,
// and the queue grows to the socket's buffer, autotuned to MBs, when it reads nothing); a
// connection that had a session and has none left (it timed out: a viewer that stops
// reading sends no keep-alive either) is no viewer any more. Either for stall_seconds:
// closed, and what it held is freed.
typedef struct {
    int last_outq;
    int stalled;
    int had_session;
} stall_state;

static gboolean check_stalls(gpointer user) {
    shutter_rtsp *s = user;
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    gst_rtsp_session_pool_cleanup(pool);
    g_object_unref(pool);
    GList *clients = gst_rtsp_server_client_filter(s->server, NULL, NULL);
    for (GList *l = clients; l; l = l->next) {
        GstRTSPClient *c = l->data;
        stall_state *st = g_object_get_data(G_OBJECT(c), "shutter-stall");
        if (!st) {
            st = g_new0(stall_state, 1);
            g_object_set_data_full(G_OBJECT(c), "shutter-stall", st, g_free);
        }
        GList *sessions = gst_rtsp_client_session_filter(c, NULL, NULL);
        int has_session = sessions != NULL;
        g_list_free_full(sessions, g_object_unref);
        GstRTSPConnection *conn = gst_rtsp_client_get_connection(c);
        GSocket *sock = conn ? gst_rtsp_connection_get_write_socket(conn) : NULL;
        int outq = 0;
        if (sock && ioctl(g_socket_get_fd(sock), SIOCOUTQ, &outq) != 0) outq = 0;
        int stuck = (outq > 0 && outq >= st->last_outq) || (st->had_session && !has_session);
        st->stalled = stuck ? st->stalled + 1 : 0;
        st->last_outq = outq;
        st->had_session |= has_session;
        if (st->stalled >= s->cfg.stall_seconds) {
            st->stalled = -1000000;  // closed once
            g_mutex_lock(&s->lock);
            s->stats.stalled_closed++;
            g_mutex_unlock(&s->lock);
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
    (void)client;
    (void)user;
    gst_rtsp_session_set_timeout(session, SESSION_SECONDS);
}

// A connection that closes takes its sessions along at once.
static GstRTSPFilterResult drop_session(GstRTSPClient *client, GstRTSPSession *session, gpointer user) {
    (void)client;
    gst_rtsp_session_pool_remove(user, session);
    return GST_RTSP_FILTER_REMOVE;
}

static void client_closed(GstRTSPClient *client, gpointer user) {
    shutter_rtsp *s = user;
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    gst_rtsp_client_session_filter(client, drop_session, pool);
    g_object_unref(pool);
}

static void client_connected(GstRTSPServer *server, GstRTSPClient *client, gpointer user) {
    (void)server;
    g_signal_connect(client, "new-session", G_CALLBACK(session_made), user);
    g_signal_connect(client, "closed", G_CALLBACK(client_closed), user);
}

// MARK: the loop

static gpointer run_loop(gpointer user) {
    shutter_rtsp *s = user;
    g_main_context_push_thread_default(s->context);
    g_main_loop_run(s->loop);
    g_main_context_pop_thread_default(s->context);
    return NULL;
}

static gpointer init_gstreamer(gpointer unused) {
    (void)unused;
    gst_init(NULL, NULL);
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
        set_err(err, errlen, "invalid RTSP configuration");
        return -1;
    }
    GstElementFactory *pay = gst_element_factory_find("rtph264pay");
    GstElementFactory *src = gst_element_factory_find("appsrc");
    if (!pay || !src) {
        if (pay) gst_object_unref(pay);
        if (src) gst_object_unref(src);
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
    g_mutex_init(&s->lock);
    s->context = g_main_context_new();
    s->loop = g_main_loop_new(s->context, FALSE);

    s->server = gst_rtsp_server_new();
    gst_rtsp_server_set_address(s->server, cfg->host);
    gchar *service = g_strdup_printf("%d", cfg->port);
    gst_rtsp_server_set_service(s->server, service);
    g_free(service);
    GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool(s->server);
    gst_rtsp_session_pool_set_max_sessions(pool, cfg->max_viewers > 0 ? (guint)cfg->max_viewers : 1);
    g_object_unref(pool);
    g_signal_connect(s->server, "client-connected", G_CALLBACK(client_connected), s);

    s->factory = gst_rtsp_media_factory_new();
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

    s->server_source = gst_rtsp_server_attach(s->server, s->context);
    if (s->server_source == 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "cannot listen on %s:%d (in use, or not an address of this machine)", cfg->host,
                 cfg->port);
        set_err(err, errlen, msg);
        shutter_rtsp_stop(s);
        return -1;
    }
    s->port = gst_rtsp_server_get_bound_port(s->server);
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
    int prepared = s->video_src != NULL;
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

void shutter_rtsp_push_video(shutter_rtsp *s, const uint8_t *header, size_t header_len, const uint8_t *data,
                             size_t len, int key) {
    g_mutex_lock(&s->lock);
    GstElement *src = s->video_src ? gst_object_ref(s->video_src) : NULL;
    if (src && queued_bytes(src) > VIDEO_QUEUE_BYTES) s->need_key = 1;
    int skip = src && s->need_key && !key;
    if (src && key) s->need_key = 0;
    if (skip) s->stats.video_dropped++;
    else if (src) s->stats.video_pushed++;
    g_mutex_unlock(&s->lock);
    if (!src) return;
    if (!skip) {
        size_t extra = (key && header) ? header_len : 0;
        GstBuffer *buf = gst_buffer_new_allocate(NULL, extra + len, NULL);
        if (extra) gst_buffer_fill(buf, 0, header, extra);
        gst_buffer_fill(buf, extra, data, len);
        if (!key) GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
        GstFlowReturn r;
        g_signal_emit_by_name(src, "push-buffer", buf, &r);
        gst_buffer_unref(buf);
    }
    gst_object_unref(src);
}

// Audio times run on from the samples pushed (the push time jitters with the chunks, and
// AAC's timestamps would then step back); back to the clock when they drift from it by
// more than AUDIO_RESYNC (the microphone lost samples).
#define AUDIO_RESYNC (200 * GST_MSECOND)

void shutter_rtsp_push_audio(shutter_rtsp *s, const int16_t *samples, size_t count) {
    g_mutex_lock(&s->lock);
    GstElement *src = s->audio_src ? gst_object_ref(s->audio_src) : NULL;
    int video_started = s->video_src && !s->need_key;
    int rate = s->audio_rate, channels = s->audio_channels;
    g_mutex_unlock(&s->lock);
    if (!src) return;
    GstClock *clock = gst_element_get_clock(src);
    if (clock && video_started && rate > 0 && channels > 0 && queued_bytes(src) <= AUDIO_QUEUE_BYTES) {
        GstClockTime now = gst_clock_get_time(clock) - gst_element_get_base_time(src);
        GstClockTime duration = gst_util_uint64_scale(count / (size_t)channels, GST_SECOND, (guint64)rate);
        g_mutex_lock(&s->lock);
        if (s->audio_next == GST_CLOCK_TIME_NONE || s->audio_next + AUDIO_RESYNC < now || now + AUDIO_RESYNC < s->audio_next)
            s->audio_next = now;
        GstClockTime pts = s->audio_next;
        s->audio_next += duration;
        s->stats.audio_pushed++;
        g_mutex_unlock(&s->lock);
        GstBuffer *buf = gst_buffer_new_allocate(NULL, count * sizeof(int16_t), NULL);
        gst_buffer_fill(buf, 0, samples, count * sizeof(int16_t));
        GST_BUFFER_PTS(buf) = pts;
        GST_BUFFER_DURATION(buf) = duration;
        GstFlowReturn r;
        g_signal_emit_by_name(src, "push-buffer", buf, &r);
        gst_buffer_unref(buf);
    }
    if (clock) gst_object_unref(clock);
    gst_object_unref(src);
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
    if (s->server_source) {
        GSource *src = g_main_context_find_source_by_id(s->context, s->server_source);
        if (src) g_source_destroy(src);
    }
    g_mutex_lock(&s->lock);
    g_clear_object(&s->video_src);
    g_clear_object(&s->audio_src);
    s->media = NULL;
    g_mutex_unlock(&s->lock);
    g_clear_object(&s->factory);
    g_clear_object(&s->server);
    g_clear_object(&s->auth);
    if (s->token) gst_rtsp_token_unref(s->token);
    g_main_loop_unref(s->loop);
    g_main_context_unref(s->context);
    g_mutex_clear(&s->lock);
    g_free(s->path);
    g_free(s);
}
