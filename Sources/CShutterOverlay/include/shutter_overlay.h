// SPDX-License-Identifier: BSD-2-Clause
/*
 * The time stamp in the picture (docs/overlay.md): text rendered by FreeType into an
 * 8-bit alpha bitmap, and that bitmap blended into the planes of a YUV 4:2:0 frame.
 * A plain C header: Swift sees no FreeType type. A font handle is not thread-safe
 * (FreeType's FT_Face): its owner calls it under one lock. The blend touches only the
 * bitmap's rectangle.
 */
#ifndef SHUTTER_OVERLAY_H
#define SHUTTER_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shutter_font shutter_font;

/* Opens the font file (any format FreeType reads: TrueType, OpenType). NULL with a
 * message in `err` when the file is missing or not a font. */
shutter_font *shutter_font_open(const char *path, char *err, size_t err_len);
void shutter_font_close(shutter_font *font);

/* Renders UTF-8 `text` with glyphs `pixel_height` pixels high (the font's ascender
 * plus descender) into `alpha` (row after row, `*width` x `*height`, 0 = clear, 255 =
 * ink), with `pad` pixels of margin on every side (the box drawn behind the text).
 * Width and height are rounded up to even numbers (4:2:0 chroma). With `alpha` NULL or
 * `capacity` too small it only measures. Returns 0, or -1 when FreeType fails. */
int shutter_font_render(shutter_font *font, const char *text, int pixel_height, int pad,
                        uint8_t *alpha, size_t capacity, int *width, int *height);

/* Blends an alpha bitmap into a YUV 4:2:0 picture at (x, y), both even, the bitmap
 * inside the picture. The box behind the text darkens the luma by `box` / 255 and takes
 * as much colour out of the chroma; ink is drawn as white (luma 235) with neutral chroma.
 * `y_plane` row 0 is picture row y (the caller may hand a band of rows); `u_plane` and
 * `v_plane` likewise start at chroma row y / 2. NV12: `interleaved` 1, `u_plane` the UV
 * plane, `v_plane` unused. */
void shutter_overlay_blend(const uint8_t *alpha, int width, int height, int box,
                           uint8_t *y_plane, int y_stride, uint8_t *u_plane, uint8_t *v_plane, int c_stride,
                           int interleaved, int x);

/* The same into a packed picture whose row 0 is picture row y: `layout` 0 is 3-byte RGB
 * or BGR (each channel darkened by the box, then moved to 255 by ink: white, no colour
 * under full ink), 1 is YUYV 4:2:2 (luma as above, each pixel pair's U and V towards 128
 * by the box and the pair's ink). `x` even for YUYV. */
void shutter_overlay_blend_packed(const uint8_t *alpha, int width, int height, int box,
                                  uint8_t *row0, int stride, int x, int layout);

#ifdef __cplusplus
}
#endif

#endif
