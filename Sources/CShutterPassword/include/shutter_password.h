// SPDX-License-Identifier: BSD-2-Clause
// Web page passwords as Argon2id hashes (libsodium), behind one plain C header. Apart
// from the web shim so that `shutterctl web-password` links libsodium and no HTTP library.
#ifndef SHUTTER_PASSWORD_H
#define SHUTTER_PASSWORD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 0 when libsodium is ready.
int shutter_web_crypto_init(void);
/// Argon2id at libsodium's INTERACTIVE cost into `out` (128 bytes). 0 on success.
/// `length` bytes of `password`, all of them (a NUL among them does not end it).
int shutter_web_hash_password(const char *password, size_t length, char out[128]);
/// 0 = the password (`length` bytes) matches the hash, -1 = it does not (or the hash is malformed).
int shutter_web_verify_password(const char *hash, const char *password, size_t length);
/// 1 = a well-formed Argon2id hash string (cost read from it), 0 = not.
int shutter_web_hash_is_valid(const char *hash);

#ifdef __cplusplus
}
#endif
#endif
