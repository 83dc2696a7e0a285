// SPDX-License-Identifier: BSD-2-Clause
// API tokens' digests (libsodium), apart from shutter_web.h: the token store is
// the only user. A token is 32 random bytes, so a fast hash is enough (nothing
// to stretch, unlike a password): SHA-256.
#ifndef SHUTTER_WEB_TOKEN_H
#define SHUTTER_WEB_TOKEN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// SHA-256 of `length` bytes of `token` into `out` (32 bytes). 0 on success.
int shutter_web_token_digest(const void *token, size_t length, unsigned char out[32]);

#ifdef __cplusplus
}
#endif
#endif
