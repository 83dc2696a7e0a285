// Passwords and session tokens: libsodium's Argon2id and random bytes.
#include "shutter_web.h"

#include <sodium.h>
#include <string.h>

int shutter_web_crypto_init(void) { return sodium_init() < 0 ? -1 : 0; }

int shutter_web_hash_password(const char *password, size_t length, char out[128]) {
    return crypto_pwhash_str_alg(out, password, length, crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                 crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13);
}

int shutter_web_verify_password(const char *hash, const char *password, size_t length) {
    return crypto_pwhash_str_verify(hash, password, length) == 0 ? 0 : -1;
}

int shutter_web_hash_is_valid(const char *hash) {
    if (strncmp(hash, "$argon2id$", 10) != 0) return 0;
    // -1 = not a hash libsodium can read; 0/1 = readable (1: other costs than INTERACTIVE).
    return crypto_pwhash_str_needs_rehash(hash, crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                          crypto_pwhash_MEMLIMIT_INTERACTIVE) >= 0;
}

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
