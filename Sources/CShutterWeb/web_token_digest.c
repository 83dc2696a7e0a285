// SPDX-License-Identifier: BSD-2-Clause
// API tokens' digests: libsodium's SHA-256 (see shutter_web_token.h).
#include "shutter_web_token.h"

#include <sodium.h>

int shutter_web_token_digest(const void *token, size_t length, unsigned char out[32]) {
    return crypto_hash_sha256(out, (const unsigned char *)token, (unsigned long long)length);
}
