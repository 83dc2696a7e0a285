// SPDX-License-Identifier: BSD-2-Clause
// Web page passwords: libsodium's Argon2id.
#include "shutter_password.h"

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
