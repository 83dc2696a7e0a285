// SPDX-License-Identifier: BSD-2-Clause
// shutter_av: the only place Shutter calls FFmpeg (libavcodec, libavformat, libswscale).
// A plain C API over opaque handles so the Swift side does threads, timing and policy,
// and so this file can be compile-checked against FFmpeg 5.1 (bookworm) and 7.x.
#ifndef SHUTTER_AV_H
#define SHUTTER_AV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Input pixel layouts, same meaning as ShutterCore.PixelFormat.
typedef enum {
    SAV_PIX_I420 = 0,
    SAV_PIX_NV12 = 1,
    SAV_PIX_YUYV = 2,
    SAV_PIX_RGB24 = 3, // bytes R, G, B
    SAV_PIX_BGR24 = 4, // bytes B, G, R
} sav_pixel_format;

/// Error codes returned (negated) next to FFmpeg's AVERROR values.
typedef enum {
    SAV_OK = 0,
    SAV_ERR_NO_VIDEO_ENCODER = 1,  // no encoder with that name in this libavcodec
    SAV_ERR_NO_AUDIO_ENCODER = 2,
    SAV_ERR_VIDEO_OPEN = 3,        // the encoder exists but would not open (device, options)
    SAV_ERR_AUDIO_OPEN = 4,
    SAV_ERR_MUXER = 5,             // mp4 muxer setup or header
    SAV_ERR_IO = 6,                // a write to the file failed: see sav_writer_io_errno
    SAV_ERR_ENCODE = 7,            // encoding failed
    SAV_ERR_INVALID = 8,           // bad arguments (size, format)
    SAV_ERR_NOMEM = 9,
} sav_error;

typedef struct {
    const char *video_encoder;   // "libx264", "h264_v4l2m2m", ...
    const char *preset;          // libx264 preset ("veryfast"); NULL or "" = encoder default
    int width, height;
    int input_format;            // sav_pixel_format of the frames that will be written
    int fps;                     // nominal frame rate: rate control
    int gop;                     // frames between keyframes (= MP4 fragments); 0 = fps (~1 s)
    int64_t video_bitrate;       // bits/s; 0 = quality mode (crf) where the encoder has one
    int crf;                     // libx264 constant rate factor when video_bitrate == 0; 0 = default 23
    int threads;                 // encoder threads, 0 = automatic
    int audio_channels;          // 0 = no audio track, 1 or 2
    int audio_sample_rate;       // 48000
    int64_t audio_bitrate;       // 128000
    // What the file says about itself (NULL/0: left out). Written into the moov at the
    // header, so a clip recovered after a power cut still carries them.
    const char *creation_time;   // the first frame's exposure start, ISO 8601 UTC; NULL when untrusted
    const char *make, *model;    // as the photos' EXIF Make and Model
    const char *software;        // "Shutter 0.3.0"
    int rotation;                // display rotation, 0 or 180 (the tkhd matrix)
    int hflip, vflip;            // display mirroring
    // The encoded size when smaller than the frames (a live viewer's second stream):
    // swscale scales each frame down first. 0 = width and height.
    int out_width, out_height;
} sav_config;

typedef struct sav_writer sav_writer;

/// Opens encoders and writes the fragmented MP4 header to `fd` (owned by the caller,
/// opened for writing; this never closes or syncs it). On failure returns a negative
/// sav_error or AVERROR, *out stays NULL and `err` holds a human message.
int sav_writer_open(const sav_config *cfg, int fd, sav_writer **out, char *err, size_t errlen);

/// Encodes one frame. pts is in 1/90000 s from the clip origin and must increase.
/// planes/strides: up to 3 planes of the configured input format and size.
int sav_writer_video(sav_writer *w, const uint8_t *const planes[3], const int strides[3], int64_t pts90k);

/// Encodes interleaved s16 samples whose first sample is at `pts` samples from the clip
/// origin. A gap (pts beyond the samples so far) is filled with silence, an overlap is
/// dropped, so the audio track stays continuous on the one timeline.
int sav_writer_audio(sav_writer *w, const int16_t *samples, int frames, int64_t pts);

/// Flushes the encoders and writes the trailer. Call once; then sav_writer_free.
int sav_writer_finish(sav_writer *w);

/// Stops without writing more (after an I/O error). Frees everything.
void sav_writer_free(sav_writer *w);

/// Bytes handed to write(2) so far, and the file length at the end of the last complete
/// write call (header or whole fragment): truncating to it leaves a playable file.
int64_t sav_writer_bytes_written(const sav_writer *w);
int64_t sav_writer_committed_bytes(const sav_writer *w);
/// Whole fragments (moof + mdat) within the committed bytes, where their video ends (pts in
/// 1/90000 from the clip origin, like sav_writer_video's, just past the last frame they hold;
/// -1 before the first fragment) and how many video frames they hold. Never ahead of the
/// bytes: a fragment ends at the keyframe that starts the next one (frag_keyframe), the
/// last (written by the trailer) at the end of the last frame. The file's own timeline may
/// sit later by the audio encoder's priming delay (the muxer keeps timestamps non-negative).
int64_t sav_writer_committed_fragments(const sav_writer *w);
int64_t sav_writer_committed_video_end(const sav_writer *w);
int64_t sav_writer_committed_video_frames(const sav_writer *w);
/// errno of the failed write(2), 0 if none.
int sav_writer_io_errno(const sav_writer *w);
/// Samples of silence inserted for audio gaps, samples dropped for overlaps.
int64_t sav_writer_audio_padded(const sav_writer *w);
int64_t sav_writer_audio_trimmed(const sav_writer *w);
/// Video packets and audio packets muxed.
int64_t sav_writer_video_packets(const sav_writer *w);
int64_t sav_writer_audio_packets(const sav_writer *w);

/// Pre-roll: an encoder that runs on its own (no file), whose packets are kept in
/// memory by reference and later written by a writer opened with
/// sav_writer_open_packets. Packets are AVPackets (refcounted; a copy shares the data).
typedef struct sav_encoder sav_encoder;
typedef struct sav_packet sav_packet;

/// Opens the video encoder of `cfg` (audio fields ignored) with the stream headers
/// kept out of band (the MP4 needs them), so any keyframe can open a file.
int sav_encoder_open(const sav_config *cfg, sav_encoder **out, char *err, size_t errlen);
/// Encodes one frame at `pts90k` (rising); `force_key` asks for an IDR keyframe.
int sav_encoder_video(sav_encoder *e, const uint8_t *const planes[3], const int strides[3], int64_t pts90k,
                      int force_key);
/// The next encoded packet, or NULL. The caller owns it (sav_packet_free).
sav_packet *sav_encoder_take(sav_encoder *e);
void sav_encoder_free(sav_encoder *e);
int64_t sav_packet_pts(const sav_packet *p);   // 1/90000, as given to sav_encoder_video
int sav_packet_size(const sav_packet *p);
const uint8_t *sav_packet_data(const sav_packet *p);
int sav_packet_is_key(const sav_packet *p);
void sav_packet_free(sav_packet *p);

/// The encoder's SPS and PPS (Annex B for libx264): what an RTSP keyframe carries in band.
int sav_encoder_header(const sav_encoder *e, const uint8_t **data);
/// The stream's RFC 6381 codec ("avc1.64001F") for a browser's Media Source.
int sav_encoder_codec_string(const sav_encoder *e, char *out, size_t outlen);

/// A live fragmented MP4 stream of one encoder's packets (the web page's live video):
/// the header at open, then one fragment per packet, each to `write` (0 = taken).
typedef struct sav_live sav_live;
typedef int (*sav_live_write_fn)(void *context, const uint8_t *data, size_t len);
int sav_live_open(const sav_encoder *e, sav_live_write_fn write, void *context, sav_live **out);
/// A packet of the same encoder; the stream's times start at its first packet.
int sav_live_packet(sav_live *l, const sav_packet *p, int64_t pts90k);
void sav_live_free(sav_live *l);

/// Like sav_writer_open, but the video comes as packets of `e` (sav_writer_packet), not
/// frames: the video track takes `e`'s parameters; audio is encoded here as usual.
int sav_writer_open_packets(const sav_config *cfg, const sav_encoder *e, int fd, sav_writer **out,
                            char *err, size_t errlen);
/// Muxes (a reference to) one packet at `pts90k` from the clip origin (rising).
int sav_writer_packet(sav_writer *w, const sav_packet *p, int64_t pts90k);

/// Copies the streams of the (fragmented) MP4 at `in_path` into a regular MP4 at `out_path`
/// (one moov with complete sample tables after the media data, no moof/mfra), keeping the
/// creation time, the make/model/software keys and the display matrix. No re-encoding.
/// `out_path` is created or truncated; the caller syncs and renames it. *bytes_out gets its
/// size. Returns 0, or a negative sav_error / AVERROR with `err` holding a human message
/// (SAV_ERR_IO: see errno).
int sav_remux_regular(const char *in_path, const char *out_path, int64_t *bytes_out, char *err, size_t errlen);

/// A picture scaler for pictures of any size (a time-lapse's photos): packed RGB24 of
/// `width` x `height` to I420 planes of `out_width` x `out_height` (bicubic; its context is
/// kept while the sizes stay the same). Returns 0, or -SAV_ERR_INVALID / -SAV_ERR_NOMEM.
typedef struct sav_scaler sav_scaler;
sav_scaler *sav_scaler_new(void);
int sav_scaler_rgb_to_i420(sav_scaler *s, const uint8_t *rgb, int stride, int width, int height,
                           uint8_t *const dst[3], const int dst_strides[3], int out_width, int out_height);
void sav_scaler_free(sav_scaler *s);

/// Human text for a return value of these functions.
void sav_strerror(int code, char *buf, size_t len);

/// 1 when libavcodec has an encoder of this name.
int sav_has_encoder(const char *name);

/// FFmpeg's own log at error level only (it prints to stderr; the service logs the rest).
void sav_quiet_logs(void);

#ifdef __cplusplus
}
#endif
#endif
