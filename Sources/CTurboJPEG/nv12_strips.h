// SPDX-License-Identifier: BSD-2-Clause
// NV12 to JPEG through libjpeg's raw-data API, 16 rows at a time: luma rows are
// read in place, and only 8 rows of interleaved chroma are split into a small
// caller-owned scratch buffer per strip, instead of a de-interleaved copy of the
// whole chroma plane (TurboJPEG's YUV API wants separate Cb/Cr planes).
// libjpeg reads whole 8-sample blocks, past the image's right edge: like
// TurboJPEG, the edge sample is replicated there (luma rows are copied to
// scratch only when the width is not a multiple of 8).
// libjpeg reports errors by longjmp, so this stays in C: Swift never sees a jump.
#ifndef SHUTTER_NV12_STRIPS_H
#define SHUTTER_NV12_STRIPS_H

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} shutter_jpeg_error;

static void shutter_jpeg_error_exit(j_common_ptr cinfo) {
    longjmp(((shutter_jpeg_error *)cinfo->err)->jump, 1);
}

// Warnings go nowhere: a service has no terminal, and errors come back as text.
static void shutter_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

/// Luma and chroma row widths libjpeg reads for 4:2:0: whole 8-sample blocks.
static inline size_t shutter_jpeg_nv12_luma_row(int width) { return ((size_t)width + 7) / 8 * 8; }
static inline size_t shutter_jpeg_nv12_chroma_row(int width) { return ((size_t)width + 15) / 16 * 8; }

/// Bytes of scratch `shutter_jpeg_compress_nv12` needs: 16 padded luma rows
/// (used only for widths that are not a multiple of 8) and 8 rows of Cb and Cr.
static inline size_t shutter_jpeg_nv12_scratch_size(int width) {
    return 16 * shutter_jpeg_nv12_luma_row(width) + 16 * shutter_jpeg_nv12_chroma_row(width);
}

/// The settings of a 4:2:0 raw-data compression (NV12 strips, row pointers): YCbCr in,
/// TurboJPEG's DCT choice (accurate from quality 96), no JFIF marker (the caller adds EXIF).
static inline void shutter_jpeg_raw420_settings(struct jpeg_compress_struct *c, int width, int height, int quality) {
    c->image_width = (JDIMENSION)width;
    c->image_height = (JDIMENSION)height;
    c->input_components = 3;
    c->in_color_space = JCS_YCbCr;
    jpeg_set_defaults(c);
    jpeg_set_colorspace(c, JCS_YCbCr);
    jpeg_set_quality(c, quality, TRUE);
    c->dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_FASTEST;
    c->raw_data_in = TRUE;
    c->write_JFIF_header = FALSE;
    c->comp_info[0].h_samp_factor = 2;
    c->comp_info[0].v_samp_factor = 2;
    c->comp_info[1].h_samp_factor = 1;
    c->comp_info[1].v_samp_factor = 1;
    c->comp_info[2].h_samp_factor = 1;
    c->comp_info[2].v_samp_factor = 1;
}

/// Compresses an NV12 frame into `out` (capacity from tjBufSize, so it cannot
/// overflow). DCT choice mirrors TurboJPEG's (accurate from quality 96, fast
/// below) so all formats encode alike. No JFIF marker: the caller adds EXIF.
/// Returns 0 and sets *out_size, or -1 with a message in `err`.
static inline int shutter_jpeg_compress_nv12(const uint8_t *y, int y_stride, const uint8_t *uv, int uv_stride,
                                             int width, int height, int quality, uint8_t *scratch,
                                             uint8_t *out, unsigned long out_capacity, unsigned long *out_size,
                                             char *err, size_t err_len) {
    struct jpeg_compress_struct cinfo;
    shutter_jpeg_error jerr;
    unsigned char *buf = out;
    unsigned long size = out_capacity;
    const int cw = (width + 1) / 2, ch = (height + 1) / 2;
    const size_t yrow = shutter_jpeg_nv12_luma_row(width), crow = shutter_jpeg_nv12_chroma_row(width);
    uint8_t *ybuf = scratch, *ubuf = scratch + 16 * yrow, *vbuf = ubuf + 8 * crow;
    JSAMPROW yrows[16], urows[8], vrows[8];
    JSAMPARRAY planes[3] = { yrows, urows, vrows };

    cinfo.err = jpeg_std_error(&jerr.pub);
    jerr.pub.error_exit = shutter_jpeg_error_exit;
    jerr.pub.output_message = shutter_jpeg_output_message;
    if (setjmp(jerr.jump)) {
        char msg[JMSG_LENGTH_MAX];
        (*cinfo.err->format_message)((j_common_ptr)&cinfo, msg);
        snprintf(err, err_len, "%s", msg);
        jpeg_destroy_compress(&cinfo);
        if (buf != out) free(buf);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buf, &size);
    shutter_jpeg_raw420_settings(&cinfo, width, height, quality);
    jpeg_start_compress(&cinfo, TRUE);

    while (cinfo.next_scanline < cinfo.image_height) {
        const int row0 = (int)cinfo.next_scanline;
        // Rows past the bottom repeat the last one; libjpeg wants whole strips.
        for (int i = 0; i < 16; i++) {
            const int r = row0 + i < height ? row0 + i : height - 1;
            const uint8_t *src = y + (size_t)r * (size_t)y_stride;
            if (yrow == (size_t)width) {
                yrows[i] = (JSAMPROW)src;
            } else {
                uint8_t *dst = ybuf + (size_t)i * yrow;
                memcpy(dst, src, (size_t)width);
                memset(dst + width, src[width - 1], yrow - (size_t)width);
                yrows[i] = dst;
            }
        }
        for (int i = 0; i < 8; i++) {
            const int r = row0 / 2 + i;
            if (r >= ch) {
                urows[i] = urows[i - 1];
                vrows[i] = vrows[i - 1];
                continue;
            }
            const uint8_t *src = uv + (size_t)r * (size_t)uv_stride;
            uint8_t *u = ubuf + (size_t)i * crow, *v = vbuf + (size_t)i * crow;
            for (int x = 0; x < cw; x++) {
                u[x] = src[2 * x];
                v[x] = src[2 * x + 1];
            }
            memset(u + cw, u[cw - 1], crow - (size_t)cw);
            memset(v + cw, v[cw - 1], crow - (size_t)cw);
            urows[i] = u;
            vrows[i] = v;
        }
        jpeg_write_raw_data(&cinfo, planes, 16);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    if (buf != out) {  // libjpeg outgrew the buffer: cannot happen with tjBufSize, but never leak
        free(buf);
        snprintf(err, err_len, "JPEG larger than its %lu-byte buffer", out_capacity);
        return -1;
    }
    *out_size = size;
    return 0;
}

#endif
