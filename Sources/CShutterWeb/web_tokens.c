// SPDX-License-Identifier: BSD-2-Clause
// Session tokens: libsodium's random bytes and constant-time comparison.
#include "shutter_web.h"

#include <sodium.h>
#include <string.h>

void shutter_web_random_token(size_t count, char *out, size_t outlen) {
    unsigned char raw[64];
    if (count > sizeof raw) count = sizeof raw;
    randombytes_buf(raw, count);
    sodium_bin2base64(out, outlen, raw, count, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof raw);
}

int shutter_web_equal(const char *a, const char *b) { return shutter_web_equal_bytes(a, strlen(a), b, strlen(b)); }

int shutter_web_equal_bytes(const void *a, size_t la, const void *b, size_t lb) {
    return la == lb && sodium_memcmp(a, b, la) == 0;
}
