// SPDX-License-Identifier: BSD-2-Clause
#include "shutter_overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ft2build.h>
#include FT_FREETYPE_H

struct shutter_font {
    FT_Library library;
    FT_Face face;
};

shutter_font *shutter_font_open(const char *path, char *err, size_t err_len) {
    shutter_font *f = calloc(1, sizeof *f);
    if (!f) { snprintf(err, err_len, "out of memory"); return NULL; }
    FT_Error e = FT_Init_FreeType(&f->library);
    if (e) {
        snprintf(err, err_len, "FreeType could not start (error %d)", e);
        free(f);
        return NULL;
    }
    e = FT_New_Face(f->library, path, 0, &f->face);
    if (e) {
        snprintf(err, err_len, e == FT_Err_Cannot_Open_Resource ? "cannot open %s" : "%s is not a font FreeType reads",
                 path);
        FT_Done_FreeType(f->library);
        free(f);
        return NULL;
    }
    return f;
}

void shutter_font_close(shutter_font *f) {
    if (!f) return;
    FT_Done_Face(f->face);
    FT_Done_FreeType(f->library);
    free(f);
}

/* The next code point of UTF-8 text; an invalid byte counts as '?'. */
static uint32_t next_code_point(const unsigned char **p) {
    const unsigned char *s = *p;
    uint32_t c = s[0];
    int extra = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (extra < 0) { *p = s + 1; return '?'; }
    if (extra == 0) { *p = s + 1; return c; }
    c &= 0x3F >> extra;
    for (int i = 1; i <= extra; i++) {
        if ((s[i] & 0xC0) != 0x80) { *p = s + i; return '?'; }
        c = (c << 6) | (s[i] & 0x3F);
    }
    *p = s + extra + 1;
    return c;
}

int shutter_font_render(shutter_font *f, const char *text, int pixel_height, int pad,
                        uint8_t *alpha, size_t capacity, int *width, int *height) {
    FT_Face face = f->face;
    if (pixel_height < 4 || pad < 0) return -1;
    /* Scale so that ascender + descender is the asked height (the box fits any glyph). */
    if (FT_Set_Pixel_Sizes(face, 0, (FT_UInt)pixel_height)) return -1;
    int ascender = (int)(face->size->metrics.ascender >> 6);
    int descender = (int)(-(face->size->metrics.descender >> 6));
    int line = ascender + descender;
    if (line > 0 && line != pixel_height) {
        FT_UInt scaled = (FT_UInt)((long)pixel_height * pixel_height / line);
        if (scaled < 1) scaled = 1;
        if (FT_Set_Pixel_Sizes(face, 0, scaled)) return -1;
        ascender = (int)(face->size->metrics.ascender >> 6);
        descender = (int)(-(face->size->metrics.descender >> 6));
    }
    /* Pass 1 measures (advances), pass 2 draws. */
    int pen = 0, right = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        uint32_t c = next_code_point(&p);
        if (FT_Load_Char(face, c, FT_LOAD_DEFAULT)) continue;
        FT_Glyph_Metrics *m = &face->glyph->metrics;
        int ink = pen + (int)((m->horiBearingX + m->width + 63) >> 6);
        if (ink > right) right = ink;
        pen += (int)(face->glyph->advance.x >> 6);
    }
    if (pen > right) right = pen;
    int w = right + 2 * pad, h = ascender + descender + 2 * pad;
    w += w & 1;
    h += h & 1;
    *width = w;
    *height = h;
    if (!alpha || capacity < (size_t)w * (size_t)h) return 0;
    memset(alpha, 0, (size_t)w * (size_t)h);
    pen = pad;
    const int baseline = pad + ascender;
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        uint32_t c = next_code_point(&p);
        if (FT_Load_Char(face, c, FT_LOAD_RENDER)) continue;
        FT_GlyphSlot g = face->glyph;
        FT_Bitmap *b = &g->bitmap;
        if (b->pixel_mode == FT_PIXEL_MODE_GRAY) {
            for (unsigned row = 0; row < b->rows; row++) {
                int y = baseline - g->bitmap_top + (int)row;
                if (y < 0 || y >= h) continue;
                const uint8_t *src = b->buffer + (long)row * b->pitch;
                for (unsigned col = 0; col < b->width; col++) {
                    int x = pen + g->bitmap_left + (int)col;
                    if (x < 0 || x >= w) continue;
                    uint8_t *d = alpha + (size_t)y * (size_t)w + (size_t)x;
                    if (src[col] > *d) *d = src[col];
                }
            }
        }
        pen += (int)(g->advance.x >> 6);
    }
    return 0;
}

void shutter_overlay_blend(const uint8_t *alpha, int width, int height, int box,
                           uint8_t *y_plane, int y_stride, uint8_t *u_plane, uint8_t *v_plane, int c_stride,
                           int interleaved, int x) {
    const int keep = 255 - box;
    /* Most of the box has no ink: its luma and chroma come from two tables. */
    uint8_t dark[256], pale[256];
    for (int i = 0; i < 256; i++) {
        dark[i] = (uint8_t)((i * keep + 127) / 255);
        pale[i] = (uint8_t)(128 + ((i - 128) * keep * 255) / (255 * 255));
    }
    for (int r = 0; r < height; r++) {
        const uint8_t *a = alpha + (size_t)r * (size_t)width;
        uint8_t *yr = y_plane + (size_t)r * (size_t)y_stride + x;
        for (int c = 0; c < width; c++) {
            const int v = dark[yr[c]];
            yr[c] = a[c] ? (uint8_t)(v + ((235 - v) * a[c] + 127) / 255) : (uint8_t)v;
        }
    }
    for (int r = 0; r < height / 2; r++) {
        const uint8_t *a0 = alpha + (size_t)(2 * r) * (size_t)width, *a1 = a0 + width;
        uint8_t *ur = u_plane + (size_t)r * (size_t)c_stride;
        uint8_t *vr = interleaved ? NULL : v_plane + (size_t)r * (size_t)c_stride;
        for (int c = 0; c < width / 2; c++) {
            int m = a0[2 * c];
            if (a0[2 * c + 1] > m) m = a0[2 * c + 1];
            if (a1[2 * c] > m) m = a1[2 * c];
            if (a1[2 * c + 1] > m) m = a1[2 * c + 1];
            uint8_t *pu, *pv;
            if (interleaved) {
                pu = ur + x + 2 * c;
                pv = pu + 1;
            } else {
                pu = ur + x / 2 + c;
                pv = vr + x / 2 + c;
            }
            if (m == 0) {
                *pu = pale[*pu];
                *pv = pale[*pv];
                continue;
            }
            /* What colour is left: the box's share, then none under ink. */
            const int left = keep * (255 - m);  /* out of 255 * 255 */
            *pu = (uint8_t)(128 + ((*pu - 128) * left) / (255 * 255));
            *pv = (uint8_t)(128 + ((*pv - 128) * left) / (255 * 255));
        }
    }
}

void shutter_overlay_blend_packed(const uint8_t *alpha, int width, int height, int box,
                                  uint8_t *row0, int stride, int x, int layout) {
    const int keep = 255 - box;
    for (int r = 0; r < height; r++) {
        const uint8_t *a = alpha + (size_t)r * (size_t)width;
        uint8_t *row = row0 + (size_t)r * (size_t)stride;
        if (layout == 0) {
            uint8_t *p = row + 3 * (size_t)x;
            for (int c = 0; c < 3 * width; c++) {
                int v = (p[c] * keep + 127) / 255;
                p[c] = (uint8_t)(v + ((255 - v) * a[c / 3] + 127) / 255);
            }
            continue;
        }
        uint8_t *p = row + 2 * (size_t)x;
        for (int c = 0; c < width; c += 2) {
            for (int i = 0; i < 2; i++) {
                int v = (p[2 * (c + i)] * keep + 127) / 255;
                p[2 * (c + i)] = (uint8_t)(v + ((235 - v) * a[c + i] + 127) / 255);
            }
            const int m = a[c] > a[c + 1] ? a[c] : a[c + 1];
            const int left = keep * (255 - m);
            uint8_t *u = p + 2 * c + 1, *v = p + 2 * c + 3;
            *u = (uint8_t)(128 + ((*u - 128) * left) / (255 * 255));
            *v = (uint8_t)(128 + ((*v - 128) * left) / (255 * 255));
        }
    }
}
