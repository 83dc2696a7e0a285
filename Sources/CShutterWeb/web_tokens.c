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

int shutter_web_equal(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    return la == lb && sodium_memcmp(a, b, la) == 0;
}
