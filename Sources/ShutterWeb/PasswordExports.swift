// SPDX-License-Identifier: BSD-2-Clause
// The page checks Argon2id password hashes (PasswordHash), which live in ShutterPassword so
// that `shutterctl web-password` links libsodium without the HTTP server. Re-exported so code
// that imports ShutterWeb sees PasswordHash as before.
@_exported import ShutterPassword
