// SPDX-License-Identifier: BSD-2-Clause
// FFmpeg side of Shutter's recordings: encoders, fragmented MP4 muxer, pixel conversion.
// Written against the FFmpeg 5.1 API and kept compatible with 7.x: AVChannelLayout
// (ch_layout) only, no removed fields, the avio write callback's const change guarded.
#include "shutter_av.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

// FFmpeg 7 (libavformat 61) made the avio write callback's buffer const.
#if LIBAVFORMAT_VERSION_MAJOR >= 61
typedef const uint8_t sav_wbuf;
#else
typedef uint8_t sav_wbuf;
#endif

// Big enough that a ~1 s fragment at camera bitrates is usually one write(2).
#define SAV_IO_BUFFER (1 << 20)
#define SAV_VIDEO_TB 90000
// Audio gaps larger than this are not padded (a broken clock, not an overrun).
#define SAV_MAX_PAD_SECONDS 5
// Video keyframes muxed whose fragment is not written yet (the interleaver holds a few).
#define SAV_MAX_PENDING_KEYS 64

// The video encoder and, for packed input, the conversion to I420. Shared by the
// writer (frames in) and the pre-roll encoder (packets out).
typedef struct {
    AVCodecContext *vc;
    AVFrame *vframe;          // converted picture when the input needs swscale
    struct SwsContext *sws;
    enum AVPixelFormat in_fmt;
    int width, height;
} sav_video;

struct sav_writer {
    sav_video video;
    int fd;
    AVFormatContext *oc;
    AVCodecContext *ac;       // video.vc: NULL when the video comes as packets
    AVStream *vs, *as;
    AVFrame *aframe;          // one encoder frame of planar float audio
    int afill;                // samples already in aframe
    int64_t anext;            // pts (samples) of the next sample to go into aframe
    int audio_started;
    AVPacket *pkt;
    int64_t bytes_written, committed;
    int io_errno;
    int64_t padded, trimmed, vpackets, apackets;
    int64_t last_vpts;
    // Durability bookkeeping. With frag_keyframe the muxer writes a fragment when a video
    // keyframe reaches it: fragment i holds the video from keyframe i up to keyframe i+1
    // (the last one, written by the trailer, up to the end of the last frame). The write
    // callback walks the top-level boxes to see each fragment's mdat end; keys[] are the
    // keyframes muxed (pts in 1/90000, and how many video packets came before each) from
    // the start of the open fragment on.
    int64_t box_left;         // bytes of the current top-level box still to come
    uint8_t box_hdr[16];
    int box_hdr_fill;
    int box_is_mdat;
    struct { int64_t pts, index; } keys[SAV_MAX_PENDING_KEYS];
    int key_head, key_count;
    int keys_lost;            // bookkeeping out of step: stop advancing (never over-claim)
    int finishing;            // the trailer is being written: the last fragment ends the video
    int64_t vend_last;        // end of the newest video packet muxed (pts + duration)
    int64_t last_vpkt, last_vdur;
    // Keyframes by time (sav_writer_video): the interval in 1/90000 s (0: count only), and
    // the newest keyframe's pts, forced or the encoder's own (INT64_MIN before the first).
    int64_t key_ticks, last_key;
    int64_t fragments, fragments_committed;
    int64_t vend_written, vend_committed; // video end of the whole fragments written, -1 none
    int64_t vframes_written, vframes_committed; // video frames in them
};

// The pre-roll encoder: frames in, packets out, no file.
struct sav_encoder {
    sav_video video;
    int64_t last_pts;
};

static void set_err(char *err, size_t len, const char *fmt, const char *a, int code) {
    if (!err || !len) return;
    char av[128] = "";
    if (code) av_strerror(code, av, sizeof av);
    snprintf(err, len, fmt, a ? a : "", av);
}

static int64_t be(const uint8_t *p, int n) {
    int64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

// A fragment's mdat is complete: the video it holds ends where the next keyframe starts.
static void fragment_written(sav_writer *w) {
    w->fragments++;
    if (w->keys_lost) return;
    if (w->key_count >= 2) {
        w->key_head = (w->key_head + 1) % SAV_MAX_PENDING_KEYS;
        w->key_count--;
        w->vend_written = w->keys[w->key_head].pts;
        w->vframes_written = w->keys[w->key_head].index;
    } else if (w->finishing && w->key_count == 1) {
        w->key_count = 0;
        w->vend_written = w->vend_last;
        w->vframes_written = w->vpackets;
    } else {
        w->keys_lost = 1; // a fragment not cut at a keyframe: not this muxer's behaviour
    }
}

// Follows the top-level MP4 boxes in the bytes written (headers may straddle calls).
static void track_boxes(sav_writer *w, const uint8_t *p, int64_t n) {
    while (n > 0) {
        if (w->box_left == 0) {
            int need = (w->box_hdr_fill >= 4 && be(w->box_hdr, 4) == 1) ? 16 : 8;
            while (w->box_hdr_fill < need && n > 0) {
                w->box_hdr[w->box_hdr_fill++] = *p++;
                n--;
                if (w->box_hdr_fill == 4 && be(w->box_hdr, 4) == 1) need = 16;
            }
            if (w->box_hdr_fill < need) return;
            int64_t size = need == 16 ? be(w->box_hdr + 8, 8) : be(w->box_hdr, 4);
            w->box_is_mdat = memcmp(w->box_hdr + 4, "mdat", 4) == 0;
            w->box_hdr_fill = 0;
            if (size < need) { w->keys_lost = 1; w->box_left = INT64_MAX; continue; } // size 0: to the end
            w->box_left = size - need;
        } else {
            int64_t take = n < w->box_left ? n : w->box_left;
            w->box_left -= take;
            p += take;
            n -= take;
        }
        if (w->box_left == 0 && w->box_hdr_fill == 0 && w->box_is_mdat) {
            w->box_is_mdat = 0;
            fragment_written(w);
        }
    }
}

static void commit(sav_writer *w) {
    w->committed = w->bytes_written;
    w->fragments_committed = w->fragments;
    w->vend_committed = w->vend_written;
    w->vframes_committed = w->vframes_written;
}

static int write_cb(void *opaque, sav_wbuf *buf, int size) {
    sav_writer *w = opaque;
    int done = 0;
    while (done < size) {
        ssize_t n = write(w->fd, buf + done, (size_t)(size - done));
        if (n < 0) {
            if (errno == EINTR) continue;
            w->io_errno = errno;
            return AVERROR(errno);
        }
        track_boxes(w, (const uint8_t *)buf + done, n);
        done += (int)n;
        w->bytes_written += n;
    }
    return size;
}

static enum AVPixelFormat av_format(int f) {
    switch (f) {
    case SAV_PIX_I420: return AV_PIX_FMT_YUV420P;
    case SAV_PIX_NV12: return AV_PIX_FMT_NV12;
    case SAV_PIX_YUYV: return AV_PIX_FMT_YUYV422;
    case SAV_PIX_RGB24: return AV_PIX_FMT_RGB24;
    case SAV_PIX_BGR24: return AV_PIX_FMT_BGR24;
    default: return AV_PIX_FMT_NONE;
    }
}

// After a successful write call the muxer has emitted whole boxes only (with
// frag_keyframe a fragment is built in memory and written at once), so the
// file length there is a safe truncation point.
// Muxes `pkt` (timestamps in `tb`; unreferenced afterwards) with the durability bookkeeping.
static int mux_packet(sav_writer *w, AVStream *st, AVPacket *pkt, AVRational tb) {
        pkt->stream_index = st->index;
        if (st == w->vs) {
            // In the codec's 1/90000; no B-frames, so pts order is decode order.
            int64_t pts = pkt->pts;
            // A packet without a duration lasts as long as the one before it.
            int64_t d = pkt->duration > 0 ? pkt->duration : w->last_vdur;
            if (w->vpackets > 0 && pts > w->last_vpkt) w->last_vdur = pts - w->last_vpkt;
            if (pts + d > w->vend_last) w->vend_last = pts + d;
            w->last_vpkt = pts;
            if (pkt->flags & AV_PKT_FLAG_KEY) {
                if (pts > w->last_key) w->last_key = pts;
                if (w->key_count == SAV_MAX_PENDING_KEYS) w->keys_lost = 1;
                else {
                    int k = (w->key_head + w->key_count++) % SAV_MAX_PENDING_KEYS;
                    w->keys[k].pts = pts;
                    w->keys[k].index = w->vpackets;
                }
            }
        }
        av_packet_rescale_ts(pkt, tb, st->time_base);
        if (st == w->vs) w->vpackets++; else w->apackets++;
        int r = av_interleaved_write_frame(w->oc, pkt);
        if (r < 0 || w->io_errno) return w->io_errno ? -SAV_ERR_IO : r;
        commit(w);
        return 0;
}

static int mux(sav_writer *w, AVCodecContext *c, AVStream *st) {
    for (;;) {
        int r = avcodec_receive_packet(c, w->pkt);
        if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return 0;
        if (r < 0) return -SAV_ERR_ENCODE;
        if ((r = mux_packet(w, st, w->pkt, c->time_base)) < 0) return r;
    }
}


static int open_video_codec(sav_video *v, const sav_config *cfg, int global_header, char *err, size_t errlen) {
    const AVCodec *codec = avcodec_find_encoder_by_name(cfg->video_encoder);
    if (!codec) {
        set_err(err, errlen, "this FFmpeg (libavcodec) has no video encoder named '%s'%s", cfg->video_encoder, 0);
        return -SAV_ERR_NO_VIDEO_ENCODER;
    }
    AVCodecContext *c = v->vc = avcodec_alloc_context3(codec);
    if (!c) return -SAV_ERR_NOMEM;
    const int scaled = cfg->out_width > 0 && cfg->out_height > 0
        && (cfg->out_width != cfg->width || cfg->out_height != cfg->height);
    c->width = scaled ? cfg->out_width : cfg->width;
    c->height = scaled ? cfg->out_height : cfg->height;
    // NV12 and I420 go in as they are (libx264 and the V4L2 encoder take both); packed
    // formats are converted once to I420.
    c->pix_fmt = (v->in_fmt == AV_PIX_FMT_NV12) ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P;
    c->time_base = (AVRational){1, SAV_VIDEO_TB};
    c->framerate = (AVRational){cfg->fps, 1};
    // A keyframe is a fragment boundary: what a power cut can lose at most.
    const int gop = cfg->gop > 0 ? cfg->gop : cfg->fps;
    c->gop_size = gop;
    c->thread_count = cfg->threads;
    if (global_header) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (cfg->video_bitrate > 0) c->bit_rate = cfg->video_bitrate;
    if (strcmp(codec->name, "libx264") == 0) {
        if (cfg->preset && cfg->preset[0]) av_opt_set(c->priv_data, "preset", cfg->preset, 0);
        // No lookahead and sliced threads: a frame leaves the encoder as soon as it is
        // coded, so a power cut loses only the open fragment, not a lookahead's worth too.
        av_opt_set(c->priv_data, "tune", "zerolatency", 0);
        if (cfg->video_bitrate <= 0) av_opt_set_double(c->priv_data, "crf", cfg->crf > 0 ? cfg->crf : 23, 0);
        av_opt_set_int(c->priv_data, "forced-idr", 1, 0);
        c->keyint_min = gop;
        // No B-frames: a fragmented MP4 has no edit list, so a reorder delay would show as
        // a 2-frame (67 ms) video start offset; it also keeps encoder latency and memory low.
        c->max_b_frames = 0;
    } else if (cfg->video_bitrate <= 0) {
        c->bit_rate = (int64_t)c->width * c->height * cfg->fps / 8; // ~0.125 bit/pixel
    }
    int r = avcodec_open2(c, codec, NULL);
    if (r < 0) {
        set_err(err, errlen, "video encoder '%s' would not open: %s", cfg->video_encoder, r);
        return -SAV_ERR_VIDEO_OPEN;
    }
    if (v->in_fmt != c->pix_fmt || scaled) {
        v->vframe = av_frame_alloc();
        if (!v->vframe) return -SAV_ERR_NOMEM;
        v->vframe->format = c->pix_fmt;
        v->vframe->width = c->width;
        v->vframe->height = c->height;
        if (av_frame_get_buffer(v->vframe, 0) < 0) return -SAV_ERR_NOMEM;
        v->sws = sws_getContext(cfg->width, cfg->height, v->in_fmt, c->width, c->height, c->pix_fmt,
                                SWS_BILINEAR, NULL, NULL, NULL);
        if (!v->sws) {
            set_err(err, errlen, "no pixel conversion or scaling from this input format%s%s", "", 0);
            return -SAV_ERR_INVALID;
        }
    }
    return 0;
}

// The video track of `w`, with the parameters of encoder `c`.
static int add_video_stream(sav_writer *w, const AVCodecContext *c) {
    w->vs = avformat_new_stream(w->oc, NULL);
    if (!w->vs) return -SAV_ERR_NOMEM;
    w->vs->time_base = c->time_base;
    w->vs->avg_frame_rate = c->framerate;
    return avcodec_parameters_from_context(w->vs->codecpar, c);
}

// Sends one picture to the encoder (converted first when the input is packed).
static int send_picture(sav_video *v, const uint8_t *const planes[3], const int strides[3], int64_t pts,
                        int force_key) {
    AVFrame f;
    memset(&f, 0, sizeof f);
    AVFrame *frame = &f;
    if (v->sws) {
        if (av_frame_make_writable(v->vframe) < 0) return -SAV_ERR_NOMEM;
        const uint8_t *src[4] = {planes[0], planes[1], planes[2], NULL};
        int srcStride[4] = {strides[0], strides[1], strides[2], 0};
        sws_scale(v->sws, src, srcStride, 0, v->height, v->vframe->data, v->vframe->linesize);
        frame = v->vframe;
    } else {
        // Not refcounted: libavcodec copies it before returning, so the caller may reuse the planes.
        f.format = v->vc->pix_fmt;
        f.width = v->width;
        f.height = v->height;
        for (int i = 0; i < 3; i++) {
            f.data[i] = (uint8_t *)planes[i];
            f.linesize[i] = strides[i];
        }
    }
    frame->pts = pts;
    // With libx264's forced-idr an I picture is an IDR: a point a file can start from.
    frame->pict_type = force_key ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
    int r = avcodec_send_frame(v->vc, frame);
    return r < 0 ? -SAV_ERR_ENCODE : 0;
}

static void close_video(sav_video *v) {
    avcodec_free_context(&v->vc);
    av_frame_free(&v->vframe);
    sws_freeContext(v->sws);
    v->sws = NULL;
}

static int open_audio(sav_writer *w, const sav_config *cfg, char *err, size_t errlen) {
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_AAC);
    if (!codec) {
        set_err(err, errlen, "this FFmpeg (libavcodec) has no AAC encoder%s%s", "", 0);
        return -SAV_ERR_NO_AUDIO_ENCODER;
    }
    AVCodecContext *c = w->ac = avcodec_alloc_context3(codec);
    if (!c) return -SAV_ERR_NOMEM;
    c->sample_fmt = AV_SAMPLE_FMT_FLTP;
    c->sample_rate = cfg->audio_sample_rate;
    av_channel_layout_default(&c->ch_layout, cfg->audio_channels);
    c->bit_rate = cfg->audio_bitrate > 0 ? cfg->audio_bitrate : 128000;
    c->time_base = (AVRational){1, cfg->audio_sample_rate};
    if (w->oc->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    int r = avcodec_open2(c, codec, NULL);
    if (r < 0) {
        set_err(err, errlen, "AAC encoder would not open%s: %s", "", r);
        return -SAV_ERR_AUDIO_OPEN;
    }
    w->as = avformat_new_stream(w->oc, NULL);
    if (!w->as) return -SAV_ERR_NOMEM;
    w->as->time_base = c->time_base;
    r = avcodec_parameters_from_context(w->as->codecpar, c);
    if (r < 0) return r;
    w->aframe = av_frame_alloc();
    if (!w->aframe) return -SAV_ERR_NOMEM;
    w->aframe->format = c->sample_fmt;
    w->aframe->nb_samples = c->frame_size;
    w->aframe->sample_rate = c->sample_rate;
    if (av_channel_layout_copy(&w->aframe->ch_layout, &c->ch_layout) < 0) return -SAV_ERR_NOMEM;
    if (av_frame_get_buffer(w->aframe, 0) < 0) return -SAV_ERR_NOMEM;
    return 0;
}

// The display matrix as stream side data: FFmpeg 6.1 moved it to codecpar.
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 100)
#define SAV_CODECPAR_SIDE_DATA 1
#endif

static int put_display_matrix(AVStream *st, const uint8_t *data, size_t size) {
#ifdef SAV_CODECPAR_SIDE_DATA
    AVPacketSideData *sd = av_packet_side_data_new(&st->codecpar->coded_side_data, &st->codecpar->nb_coded_side_data,
                                                   AV_PKT_DATA_DISPLAYMATRIX, size, 0);
    if (!sd) return -SAV_ERR_NOMEM;
    memcpy(sd->data, data, size);
#else
    uint8_t *sd = av_stream_new_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, size);
    if (!sd) return -SAV_ERR_NOMEM;
    memcpy(sd, data, size);
#endif
    return 0;
}

#ifndef SAV_CODECPAR_SIDE_DATA
// Before 6.1 the demuxer leaves it on the stream; later avcodec_parameters_copy carries it.
static const uint8_t *get_display_matrix(const AVStream *st, size_t *size) {
    return av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, size);
}
#endif

// Creation time, make, model, software and the display matrix of a new file.
static int set_labels(AVFormatContext *oc, AVStream *vs, const sav_config *cfg) {
    if (cfg->creation_time && *cfg->creation_time) av_dict_set(&oc->metadata, "creation_time", cfg->creation_time, 0);
    if (cfg->make && *cfg->make) av_dict_set(&oc->metadata, "com.apple.quicktime.make", cfg->make, 0);
    if (cfg->model && *cfg->model) av_dict_set(&oc->metadata, "com.apple.quicktime.model", cfg->model, 0);
    if (cfg->software && *cfg->software) av_dict_set(&oc->metadata, "com.apple.quicktime.software", cfg->software, 0);
    if (cfg->rotation || cfg->hflip || cfg->vflip) {
        int32_t m[9];
        // av_display_rotation_set takes the angle counter-clockwise.
        av_display_rotation_set(m, -(double)cfg->rotation);
        av_display_matrix_flip(m, cfg->hflip, cfg->vflip);
        return put_display_matrix(vs, (const uint8_t *)m, sizeof m);
    }
    return 0;
}

static int writer_open(const sav_config *cfg, const sav_encoder *enc, int fd, sav_writer **out, char *err,
                       size_t errlen) {
    *out = NULL;
    if (err && errlen) err[0] = 0;
    if (!cfg || !cfg->video_encoder || cfg->width <= 0 || cfg->height <= 0 || cfg->fps <= 0 ||
        cfg->audio_channels < 0 || cfg->audio_channels > 2 ||
        (cfg->audio_channels > 0 && cfg->audio_sample_rate <= 0)) {
        set_err(err, errlen, "invalid recording configuration%s%s", "", 0);
        return -SAV_ERR_INVALID;
    }
    sav_writer *w = av_mallocz(sizeof *w);
    if (!w) return -SAV_ERR_NOMEM;
    w->fd = fd;
    w->video.width = cfg->width;
    w->video.height = cfg->height;
    w->last_vpts = INT64_MIN;
    w->last_key = INT64_MIN;
    w->vend_written = w->vend_committed = -1;
    w->video.in_fmt = av_format(cfg->input_format);
    int r = -SAV_ERR_INVALID;
    if (!enc && w->video.in_fmt == AV_PIX_FMT_NONE) goto fail;
    w->pkt = av_packet_alloc();
    if (!w->pkt) { r = -SAV_ERR_NOMEM; goto fail; }
    r = avformat_alloc_output_context2(&w->oc, NULL, "mp4", NULL);
    if (r < 0 || !w->oc) { set_err(err, errlen, "no mp4 muxer%s: %s", "", r); r = -SAV_ERR_MUXER; goto fail; }
    if (enc) {
        if ((r = add_video_stream(w, enc->video.vc)) < 0) goto fail;
    } else {
        const int global = (w->oc->oformat->flags & AVFMT_GLOBALHEADER) != 0;
        if ((r = open_video_codec(&w->video, cfg, global, err, errlen)) < 0) goto fail;
        if ((r = add_video_stream(w, w->video.vc)) < 0) goto fail;
        const int gop = cfg->gop > 0 ? cfg->gop : cfg->fps;
        w->key_ticks = cfg->fps > 0 ? (int64_t)gop * SAV_VIDEO_TB / cfg->fps : 0;
    }
    if (cfg->audio_channels > 0 && (r = open_audio(w, cfg, err, errlen)) < 0) goto fail;

    uint8_t *iobuf = av_malloc(SAV_IO_BUFFER);
    if (!iobuf) { r = -SAV_ERR_NOMEM; goto fail; }
    w->oc->pb = avio_alloc_context(iobuf, SAV_IO_BUFFER, 1, w, NULL, write_cb, NULL);
    if (!w->oc->pb) { av_free(iobuf); r = -SAV_ERR_NOMEM; goto fail; }
    w->oc->pb->seekable = 0;
    w->oc->flags |= AVFMT_FLAG_FLUSH_PACKETS;

    if ((r = set_labels(w->oc, w->vs, cfg)) < 0) goto fail;

    AVDictionary *opts = NULL;
    // Each keyframe closes a fragment that is written at once; the moov is written up
    // front, so the file is playable up to the last whole fragment at any moment.
    // use_metadata_tags: make, model and software as QuickTime keys (exiftool, ffprobe).
    av_dict_set(&opts, "movflags", "frag_keyframe+empty_moov+default_base_moof+use_metadata_tags", 0);
    av_dict_set(&opts, "flush_packets", "1", 0);
    r = avformat_write_header(w->oc, &opts);
    av_dict_free(&opts);
    if (r < 0) {
        if (w->io_errno) { set_err(err, errlen, "writing the MP4 header failed%s: %s", "", r); r = -SAV_ERR_IO; }
        else { set_err(err, errlen, "MP4 header%s: %s", "", r); r = -SAV_ERR_MUXER; }
        goto fail;
    }
    avio_flush(w->oc->pb);
    if (w->io_errno) { set_err(err, errlen, "writing the MP4 header failed%s%s", "", 0); r = -SAV_ERR_IO; goto fail; }
    commit(w);
    *out = w;
    return 0;
fail:;
    int io_errno = w->io_errno;
    sav_writer_free(w);
    errno = io_errno; // lets the caller name the failed write (ENOSPC on the header)
    return r;
}

int sav_writer_open(const sav_config *cfg, int fd, sav_writer **out, char *err, size_t errlen) {
    return writer_open(cfg, NULL, fd, out, err, errlen);
}

int sav_writer_open_packets(const sav_config *cfg, const sav_encoder *e, int fd, sav_writer **out,
                            char *err, size_t errlen) {
    if (!e) { *out = NULL; set_err(err, errlen, "no pre-roll encoder%s%s", "", 0); return -SAV_ERR_INVALID; }
    return writer_open(cfg, e, fd, out, err, errlen);
}

int sav_writer_video(sav_writer *w, const uint8_t *const planes[3], const int strides[3], int64_t pts90k) {
    if (w->io_errno) return -SAV_ERR_IO;
    if (!w->video.vc || pts90k <= w->last_vpts) return -SAV_ERR_INVALID;
    w->last_vpts = pts90k;
    // A keyframe once the interval has passed in time, not only after gop frames: when
    // frames are dropped (an encoder or a camera slower than fps) gop frames span longer,
    // and the open fragment, what a power cut loses, would grow with them.
    int force = 0;
    if (w->last_key == INT64_MIN) w->last_key = pts90k; // the first frame is a keyframe anyway
    else if (w->key_ticks > 0 && pts90k - w->last_key >= w->key_ticks) {
        force = 1;
        w->last_key = pts90k;
    }
    int r = send_picture(&w->video, planes, strides, pts90k, force);
    if (r < 0) return r;
    return mux(w, w->video.vc, w->vs);
}

int sav_writer_packet(sav_writer *w, const sav_packet *p, int64_t pts90k) {
    if (w->io_errno) return -SAV_ERR_IO;
    if (w->video.vc || !p || pts90k <= w->last_vpts) return -SAV_ERR_INVALID;
    w->last_vpts = pts90k;
    AVPacket *pkt = av_packet_clone((const AVPacket *)p); // a new reference, same data
    if (!pkt) return -SAV_ERR_NOMEM;
    pkt->pts = pkt->dts = pts90k; // no B-frames: decode order is presentation order
    int r = mux_packet(w, w->vs, pkt, (AVRational){1, SAV_VIDEO_TB});
    av_packet_free(&pkt);
    return r;
}

static int send_audio_frame(sav_writer *w, int nb) {
    w->aframe->nb_samples = nb;
    w->aframe->pts = w->anext - w->afill;
    int r = avcodec_send_frame(w->ac, w->aframe);
    w->afill = 0;
    if (r < 0) return -SAV_ERR_ENCODE;
    return mux(w, w->ac, w->as);
}

// Appends `n` samples (interleaved s16, or silence when `s` is NULL) to the frame buffer.
static int push_samples(sav_writer *w, const int16_t *s, int64_t n) {
    const int ch = w->ac->ch_layout.nb_channels;
    const int fs = w->ac->frame_size;
    while (n > 0) {
        if (w->afill == 0 && av_frame_make_writable(w->aframe) < 0) return -SAV_ERR_NOMEM;
        int take = fs - w->afill;
        if (take > n) take = (int)n;
        for (int c = 0; c < ch; c++) {
            float *dst = (float *)w->aframe->data[c] + w->afill;
            if (s) for (int i = 0; i < take; i++) dst[i] = s[i * ch + c] * (1.0f / 32768.0f);
            else memset(dst, 0, sizeof(float) * (size_t)take);
        }
        if (s) s += (size_t)take * (size_t)ch;
        w->afill += take;
        w->anext += take;
        n -= take;
        if (w->afill == fs) {
            int r = send_audio_frame(w, fs);
            if (r < 0) return r;
        }
    }
    return 0;
}

int sav_writer_audio(sav_writer *w, const int16_t *samples, int frames, int64_t pts) {
    if (!w->ac) return 0;
    if (w->io_errno) return -SAV_ERR_IO;
    if (frames <= 0) return 0;
    const int ch = w->ac->ch_layout.nb_channels;
    if (!w->audio_started) {
        // The first sample sits at its own pts; before the origin is cut.
        if (pts < 0) {
            if (-pts >= frames) { w->trimmed += frames; return 0; }
            samples += (size_t)(-pts) * (size_t)ch;
            frames -= (int)(-pts);
            w->trimmed += -pts;
            pts = 0;
        }
        w->anext = pts;
        w->audio_started = 1;
    }
    if (pts < w->anext) {
        int64_t over = w->anext - pts;
        if (over >= frames) { w->trimmed += frames; return 0; }
        samples += (size_t)over * (size_t)ch;
        frames -= (int)over;
        w->trimmed += over;
    } else if (pts > w->anext) {
        int64_t gap = pts - w->anext;
        if (gap <= (int64_t)w->ac->sample_rate * SAV_MAX_PAD_SECONDS) {
            int r = push_samples(w, NULL, gap);
            if (r < 0) return r;
            w->padded += gap;
        } else {
            // Too big to be an overrun: flush what is buffered and jump.
            if (w->afill > 0) { int r = send_audio_frame(w, w->afill); if (r < 0) return r; }
            w->anext = pts;
        }
    }
    return push_samples(w, samples, frames);
}

int sav_writer_finish(sav_writer *w) {
    if (w->io_errno) return -SAV_ERR_IO;
    int r;
    if (w->video.vc) {
        r = avcodec_send_frame(w->video.vc, NULL);
        if (r < 0 && r != AVERROR_EOF) return -SAV_ERR_ENCODE;
        if ((r = mux(w, w->video.vc, w->vs)) < 0) return r;
    }
    if (w->ac) {
        if (w->afill > 0 && (r = send_audio_frame(w, w->afill)) < 0) return r;
        r = avcodec_send_frame(w->ac, NULL);
        if (r < 0 && r != AVERROR_EOF) return -SAV_ERR_ENCODE;
        if ((r = mux(w, w->ac, w->as)) < 0) return r;
    }
    w->finishing = 1;
    r = av_write_trailer(w->oc);
    avio_flush(w->oc->pb);
    if (w->io_errno) return -SAV_ERR_IO;
    if (r < 0) return r;
    commit(w);
    return 0;
}

void sav_writer_free(sav_writer *w) {
    if (!w) return;
    if (w->oc) {
        if (w->oc->pb) {
            av_freep(&w->oc->pb->buffer);
            avio_context_free(&w->oc->pb);
        }
        avformat_free_context(w->oc);
    }
    close_video(&w->video);
    avcodec_free_context(&w->ac);
    av_frame_free(&w->aframe);
    av_packet_free(&w->pkt);
    av_free(w);
}

// MARK: pre-roll encoder

int sav_encoder_open(const sav_config *cfg, sav_encoder **out, char *err, size_t errlen) {
    *out = NULL;
    if (err && errlen) err[0] = 0;
    if (!cfg || !cfg->video_encoder || cfg->width <= 0 || cfg->height <= 0 || cfg->fps <= 0) {
        set_err(err, errlen, "invalid recording configuration%s%s", "", 0);
        return -SAV_ERR_INVALID;
    }
    sav_encoder *e = av_mallocz(sizeof *e);
    if (!e) return -SAV_ERR_NOMEM;
    e->video.width = cfg->width;
    e->video.height = cfg->height;
    e->video.in_fmt = av_format(cfg->input_format);
    e->last_pts = INT64_MIN;
    int r = -SAV_ERR_INVALID;
    // Headers out of band: the MP4 track carries them, so every IDR can start a file.
    if (e->video.in_fmt == AV_PIX_FMT_NONE || (r = open_video_codec(&e->video, cfg, 1, err, errlen)) < 0) {
        sav_encoder_free(e);
        return r;
    }
    *out = e;
    return 0;
}

int sav_encoder_video(sav_encoder *e, const uint8_t *const planes[3], const int strides[3], int64_t pts90k,
                      int force_key) {
    if (pts90k <= e->last_pts) return -SAV_ERR_INVALID;
    e->last_pts = pts90k;
    return send_picture(&e->video, planes, strides, pts90k, force_key);
}

sav_packet *sav_encoder_take(sav_encoder *e) {
    AVPacket *p = av_packet_alloc();
    if (!p) return NULL;
    if (avcodec_receive_packet(e->video.vc, p) < 0) { av_packet_free(&p); return NULL; }
    return (sav_packet *)p;
}

void sav_encoder_free(sav_encoder *e) {
    if (!e) return;
    close_video(&e->video);
    av_free(e);
}

int64_t sav_packet_pts(const sav_packet *p) { return ((const AVPacket *)p)->pts; }
const uint8_t *sav_packet_data(const sav_packet *p) { return ((const AVPacket *)p)->data; }
int sav_packet_size(const sav_packet *p) { return ((const AVPacket *)p)->size; }
int sav_packet_is_key(const sav_packet *p) { return (((const AVPacket *)p)->flags & AV_PKT_FLAG_KEY) != 0; }
void sav_packet_free(sav_packet *p) {
    AVPacket *pkt = (AVPacket *)p;
    av_packet_free(&pkt);
}

int64_t sav_writer_bytes_written(const sav_writer *w) { return w->bytes_written; }
int64_t sav_writer_committed_bytes(const sav_writer *w) { return w->committed; }
int64_t sav_writer_committed_fragments(const sav_writer *w) { return w->fragments_committed; }
int64_t sav_writer_committed_video_end(const sav_writer *w) { return w->vend_committed; }
int64_t sav_writer_committed_video_frames(const sav_writer *w) { return w->vframes_committed; }
int sav_writer_io_errno(const sav_writer *w) { return w->io_errno; }
int64_t sav_writer_audio_padded(const sav_writer *w) { return w->padded; }
int64_t sav_writer_audio_trimmed(const sav_writer *w) { return w->trimmed; }
int64_t sav_writer_video_packets(const sav_writer *w) { return w->vpackets; }
int64_t sav_writer_audio_packets(const sav_writer *w) { return w->apackets; }

void sav_strerror(int code, char *buf, size_t len) {
    if (!buf || !len) return;
    switch (-code) {
    case SAV_OK: snprintf(buf, len, "ok"); return;
    case SAV_ERR_NO_VIDEO_ENCODER: snprintf(buf, len, "video encoder missing"); return;
    case SAV_ERR_NO_AUDIO_ENCODER: snprintf(buf, len, "AAC encoder missing"); return;
    case SAV_ERR_VIDEO_OPEN: snprintf(buf, len, "video encoder would not open"); return;
    case SAV_ERR_AUDIO_OPEN: snprintf(buf, len, "audio encoder would not open"); return;
    case SAV_ERR_MUXER: snprintf(buf, len, "MP4 muxer failed"); return;
    case SAV_ERR_IO: snprintf(buf, len, "write to the file failed"); return;
    case SAV_ERR_ENCODE: snprintf(buf, len, "encoding failed"); return;
    case SAV_ERR_INVALID: snprintf(buf, len, "invalid argument"); return;
    case SAV_ERR_NOMEM: snprintf(buf, len, "out of memory"); return;
    default: av_strerror(code, buf, len); return;
    }
}

int sav_has_encoder(const char *name) { return avcodec_find_encoder_by_name(name) != NULL; }

void sav_quiet_logs(void) { av_log_set_level(AV_LOG_ERROR); }

// ---- The finish: fragmented → regular MP4, by stream copy ----

// Keys that travel from the recording to the finished file (the rest, brands and the
// muxer's own "encoder", are the muxers' to write).
static int keeps_key(const char *k) {
    return !strcmp(k, "creation_time") || !strncmp(k, "com.apple.quicktime.", 20);
}

// One packet of the input into the finished file: its stream and time base mapped, consumed.
static int remux_write(AVFormatContext *ic, AVFormatContext *oc, const int *map, AVPacket *p) {
    int o = map[p->stream_index];
    av_packet_rescale_ts(p, ic->streams[p->stream_index]->time_base, oc->streams[o]->time_base);
    p->stream_index = o;
    p->pos = -1;
    int r = av_interleaved_write_frame(oc, p);
    av_packet_unref(p);
    return r;
}

int sav_remux_regular(const char *in_path, const char *out_path, int64_t *bytes_out, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (bytes_out) *bytes_out = 0;
    AVFormatContext *ic = NULL, *oc = NULL;
    AVPacket *pkt = NULL, **held = NULL;
    int *map = NULL;
    int r = avformat_open_input(&ic, in_path, NULL, NULL);
    if (r < 0) { set_err(err, errlen, "cannot read the clip%s: %s", "", r); return r; }
    r = avformat_alloc_output_context2(&oc, NULL, "mp4", out_path);
    if (r < 0 || !oc) { set_err(err, errlen, "no mp4 muxer%s: %s", "", r); r = -SAV_ERR_MUXER; goto done; }
    map = av_calloc(ic->nb_streams, sizeof *map);
    held = av_calloc(ic->nb_streams, sizeof *held);
    pkt = av_packet_alloc();
    if (!map || !held || !pkt) { r = -SAV_ERR_NOMEM; goto done; }
    int outputs = 0;
    for (unsigned i = 0; i < ic->nb_streams; i++) {
        AVStream *ist = ic->streams[i];
        map[i] = -1;
        enum AVMediaType t = ist->codecpar->codec_type;
        if (t != AVMEDIA_TYPE_VIDEO && t != AVMEDIA_TYPE_AUDIO) continue;
        AVStream *ost = avformat_new_stream(oc, NULL);
        if (!ost) { r = -SAV_ERR_NOMEM; goto done; }
        if ((r = avcodec_parameters_copy(ost->codecpar, ist->codecpar)) < 0) goto done;
        ost->codecpar->codec_tag = 0;
        ost->time_base = ist->time_base;
        ost->avg_frame_rate = ist->avg_frame_rate;
        av_dict_copy(&ost->metadata, ist->metadata, 0);
#ifndef SAV_CODECPAR_SIDE_DATA
        size_t size = 0;
        const uint8_t *m = get_display_matrix(ist, &size);
        if (m && (r = put_display_matrix(ost, m, size)) < 0) goto done;
#endif
        map[i] = outputs++;
    }
    if (!outputs) { set_err(err, errlen, "the clip has no video or audio track%s%s", "", 0); r = -SAV_ERR_INVALID; goto done; }
    const AVDictionaryEntry *e = NULL;
    while ((e = av_dict_get(ic->metadata, "", e, AV_DICT_IGNORE_SUFFIX)))
        if (keeps_key(e->key)) av_dict_set(&oc->metadata, e->key, e->value, 0);
    if ((r = avio_open(&oc->pb, out_path, AVIO_FLAG_WRITE)) < 0) {
        set_err(err, errlen, "cannot create the finished clip%s: %s", "", r);
        r = -SAV_ERR_IO;
        goto done;
    }
    AVDictionary *opts = NULL;
    av_dict_set(&opts, "movflags", "use_metadata_tags", 0);
    r = avformat_write_header(oc, &opts);
    av_dict_free(&opts);
    if (r < 0) { set_err(err, errlen, "MP4 header%s: %s", "", r); goto io; }
    // The demuxer gives video packets the codec's nominal duration, not the sample's own
    // (a fragment's trun holds the real one: frames a second apart under emulation or a long
    // exposure). Each video packet is held until the next one gives its duration (the dts
    // step); the last one lasts until the stream's end, so the clip ends where it did.
    while ((r = av_read_frame(ic, pkt)) >= 0) {
        int i = pkt->stream_index;
        if (i >= (int)ic->nb_streams || map[i] < 0) { av_packet_unref(pkt); continue; }
        if (ic->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
            AVPacket *prev = held[i];
            if (prev && pkt->dts != AV_NOPTS_VALUE && prev->dts != AV_NOPTS_VALUE && pkt->dts > prev->dts)
                prev->duration = pkt->dts - prev->dts;
            held[i] = av_packet_clone(pkt);
            av_packet_unref(pkt);
            if (!held[i]) { r = -SAV_ERR_NOMEM; goto done; }
            if (!prev) continue;
            r = remux_write(ic, oc, map, prev);
            av_packet_free(&prev);
        } else {
            r = remux_write(ic, oc, map, pkt);
        }
        if (r < 0) { set_err(err, errlen, "writing the finished clip failed%s: %s", "", r); goto io; }
    }
    if (r != AVERROR_EOF) { set_err(err, errlen, "reading the clip failed%s: %s", "", r); goto done; }
    for (unsigned i = 0; i < ic->nb_streams; i++) {
        if (!held[i]) continue;
        const AVStream *st = ic->streams[i];
        int64_t at = held[i]->pts != AV_NOPTS_VALUE ? held[i]->pts : held[i]->dts;
        if (st->duration != AV_NOPTS_VALUE && at != AV_NOPTS_VALUE) {
            int64_t end = (st->start_time != AV_NOPTS_VALUE ? st->start_time : 0) + st->duration;
            if (end > at) held[i]->duration = end - at;
        }
        r = remux_write(ic, oc, map, held[i]);
        if (r < 0) { set_err(err, errlen, "writing the finished clip failed%s: %s", "", r); goto io; }
    }
    if ((r = av_write_trailer(oc)) < 0) { set_err(err, errlen, "writing the finished clip failed%s: %s", "", r); goto io; }
    if (bytes_out) *bytes_out = avio_size(oc->pb);
    r = oc->pb->error < 0 ? oc->pb->error : 0;
    if (r < 0) { set_err(err, errlen, "writing the finished clip failed%s: %s", "", r); goto io; }
    goto done;
io:
    // ENOSPC and EIO come back as AVERROR(errno): keep errno for the caller.
    if (r == AVERROR(ENOSPC) || r == AVERROR(EIO) || r == AVERROR(EDQUOT)) { errno = AVUNERROR(r); r = -SAV_ERR_IO; }
done:
    if (oc) {
        if (oc->pb) avio_closep(&oc->pb);
        avformat_free_context(oc);
    }
    if (held) for (unsigned i = 0; ic && i < ic->nb_streams; i++) av_packet_free(&held[i]);
    av_free(held);
    avformat_close_input(&ic);
    av_packet_free(&pkt);
    av_free(map);
    return r;
}

// MARK: live stream (fragmented MP4 for the web page, SPS/PPS for RTSP)

int sav_encoder_header(const sav_encoder *e, const uint8_t **data) {
    *data = e->video.vc->extradata;
    return e->video.vc->extradata_size;
}

int sav_encoder_codec_string(const sav_encoder *e, char *out, size_t outlen) {
    // RFC 6381 avc1.PPCCLL from the SPS (the first NAL of type 7 in the Annex B header).
    const uint8_t *x = e->video.vc->extradata;
    int n = e->video.vc->extradata_size;
    for (int i = 0; i + 7 < n; i++) {
        if (x[i] == 0 && x[i + 1] == 0 && x[i + 2] == 1 && (x[i + 3] & 0x1f) == 7) {
            snprintf(out, outlen, "avc1.%02X%02X%02X", x[i + 4], x[i + 5], x[i + 6]);
            return 0;
        }
    }
    if (n > 4 && x[0] == 1) { // avcC
        snprintf(out, outlen, "avc1.%02X%02X%02X", x[1], x[2], x[3]);
        return 0;
    }
    snprintf(out, outlen, "avc1.640028");
    return -SAV_ERR_INVALID;
}

#define SAV_LIVE_IO_BUFFER (64 << 10)

struct sav_live {
    AVFormatContext *oc;
    AVStream *vs;
    sav_live_write_fn write;
    void *context;
    int64_t first_pts, last_pts;
};

static int live_write_cb(void *opaque, sav_wbuf *buf, int size) {
    sav_live *l = opaque;
    return l->write(l->context, buf, (size_t)size) == 0 ? size : AVERROR(EIO);
}

int sav_live_open(const sav_encoder *e, sav_live_write_fn write, void *context, sav_live **out) {
    *out = NULL;
    sav_live *l = av_mallocz(sizeof *l);
    if (!l) return -SAV_ERR_NOMEM;
    l->write = write;
    l->context = context;
    l->first_pts = l->last_pts = INT64_MIN;
    int r = avformat_alloc_output_context2(&l->oc, NULL, "mp4", NULL);
    if (r < 0 || !l->oc) { av_free(l); return -SAV_ERR_MUXER; }
    l->vs = avformat_new_stream(l->oc, NULL);
    if (!l->vs) { sav_live_free(l); return -SAV_ERR_NOMEM; }
    l->vs->time_base = e->video.vc->time_base;
    l->vs->avg_frame_rate = e->video.vc->framerate;
    if (avcodec_parameters_from_context(l->vs->codecpar, e->video.vc) < 0) { sav_live_free(l); return -SAV_ERR_MUXER; }
    uint8_t *iobuf = av_malloc(SAV_LIVE_IO_BUFFER);
    if (!iobuf) { sav_live_free(l); return -SAV_ERR_NOMEM; }
    l->oc->pb = avio_alloc_context(iobuf, SAV_LIVE_IO_BUFFER, 1, l, NULL, live_write_cb, NULL);
    if (!l->oc->pb) { av_free(iobuf); sav_live_free(l); return -SAV_ERR_NOMEM; }
    l->oc->pb->seekable = 0;
    AVDictionary *opts = NULL;
    // Fragments cut by the caller (sav_live_packet flushes one per frame): a browser's
    // Media Source gets each frame as it is encoded.
    av_dict_set(&opts, "movflags", "frag_custom+empty_moov+default_base_moof", 0);
    r = avformat_write_header(l->oc, &opts);
    av_dict_free(&opts);
    if (r < 0) { sav_live_free(l); return -SAV_ERR_MUXER; }
    avio_flush(l->oc->pb);
    *out = l;
    return 0;
}

int sav_live_packet(sav_live *l, const sav_packet *p, int64_t pts90k) {
    if (l->first_pts == INT64_MIN) l->first_pts = pts90k;
    int64_t t = pts90k - l->first_pts;
    if (t <= l->last_pts) return -SAV_ERR_INVALID;
    AVPacket *pkt = av_packet_clone((const AVPacket *)p);
    if (!pkt) return -SAV_ERR_NOMEM;
    pkt->pts = pkt->dts = t;
    pkt->duration = l->last_pts == INT64_MIN ? 0 : t - l->last_pts;
    l->last_pts = t;
    pkt->stream_index = l->vs->index;
    av_packet_rescale_ts(pkt, (AVRational){1, SAV_VIDEO_TB}, l->vs->time_base);
    int r = av_write_frame(l->oc, pkt);
    av_packet_free(&pkt);
    if (r < 0) return -SAV_ERR_IO;
    r = av_write_frame(l->oc, NULL); // closes the fragment now
    avio_flush(l->oc->pb);
    return r < 0 ? -SAV_ERR_IO : 0;
}

void sav_live_free(sav_live *l) {
    if (!l) return;
    if (l->oc) {
        if (l->oc->pb) {
            av_freep(&l->oc->pb->buffer);
            avio_context_free(&l->oc->pb);
        }
        avformat_free_context(l->oc);
    }
    av_free(l);
}

struct sav_scaler {
    struct SwsContext *sws;
};

sav_scaler *sav_scaler_new(void) { return av_mallocz(sizeof(sav_scaler)); }

int sav_scaler_rgb_to_i420(sav_scaler *s, const uint8_t *rgb, int stride, int width, int height,
                           uint8_t *const dst[3], const int dst_strides[3], int out_width, int out_height) {
    if (!s || !rgb || width <= 0 || height <= 0 || out_width <= 0 || out_height <= 0) return -SAV_ERR_INVALID;
    s->sws = sws_getCachedContext(s->sws, width, height, AV_PIX_FMT_RGB24, out_width, out_height,
                                  AV_PIX_FMT_YUV420P, SWS_BICUBIC, NULL, NULL, NULL);
    if (!s->sws) return -SAV_ERR_NOMEM;
    const uint8_t *src[4] = {rgb, NULL, NULL, NULL};
    int src_stride[4] = {stride, 0, 0, 0};
    uint8_t *out[4] = {dst[0], dst[1], dst[2], NULL};
    int out_stride[4] = {dst_strides[0], dst_strides[1], dst_strides[2], 0};
    int r = sws_scale(s->sws, src, src_stride, 0, height, out, out_stride);
    return r == out_height ? 0 : -SAV_ERR_INVALID;
}

void sav_scaler_free(sav_scaler *s) {
    if (!s) return;
    sws_freeContext(s->sws);
    av_free(s);
}
