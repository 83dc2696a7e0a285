// SPDX-License-Identifier: BSD-2-Clause
// Intentionally empty: libcamera's headers are C++ and only the C++ shim
// (Sources/CLibcameraShim) includes them.
