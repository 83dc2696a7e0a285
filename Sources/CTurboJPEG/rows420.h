// SPDX-License-Identifier: BSD-2-Clause
// YUV 4:2:0 to JPEG from arrays of row pointers, through libjpeg's raw-data API in
// 16-row strips, as nv12_strips.h does: a caller may point some rows elsewhere (the
// time stamp's band of rows, blended in a small copy: docs/overlay.md) without copying
// the frame. I420 rows are read in place; NV12's interleaved chroma rows are split into
// the scratch; a row is copied to the scratch, its edge sample repeated, only where the
// width is not a whole number of 8-sample blocks. Same settings as nv12_strips.h.
#ifndef SHUTTER_ROWS420_H
#define SHUTTER_ROWS420_H

#include "nv12_strips.h"

/// `yrows`: `height` luma rows; `urows`/`vrows`: (height + 1) / 2 chroma rows each, or with
/// `interleaved` `urows` the NV12 UV rows and `vrows` unused. Scratch: shutter_jpeg_nv12_scratch_size.
static inline int shutter_jpeg_compress_rows420(const uint8_t *const *yrows_in, const uint8_t *const *urows_in,
                                                const uint8_t *const *vrows_in, int interleaved,
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
        for (int i = 0; i < 16; i++) {
            const int r = row0 + i < height ? row0 + i : height - 1;
            const uint8_t *src = yrows_in[r];
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
            const int r = row0 / 2 + i < ch ? row0 / 2 + i : ch - 1;
            uint8_t *u = ubuf + (size_t)i * crow, *v = vbuf + (size_t)i * crow;
            if (interleaved) {
                const uint8_t *src = urows_in[r];
                for (int x = 0; x < cw; x++) {
                    u[x] = src[2 * x];
                    v[x] = src[2 * x + 1];
                }
            } else if (crow == (size_t)cw) {
                urows[i] = (JSAMPROW)urows_in[r];
                vrows[i] = (JSAMPROW)vrows_in[r];
                continue;
            } else {
                memcpy(u, urows_in[r], (size_t)cw);
                memcpy(v, vrows_in[r], (size_t)cw);
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
    if (buf != out) {
        free(buf);
        snprintf(err, err_len, "JPEG larger than its %lu-byte buffer", out_capacity);
        return -1;
    }
    *out_size = size;
    return 0;
}

#endif
