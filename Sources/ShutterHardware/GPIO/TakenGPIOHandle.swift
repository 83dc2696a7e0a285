// SPDX-License-Identifier: BSD-2-Clause
/// A shim handle (gpiod input or output) carried out of a `Mutex` by the one caller
/// that took it, having set the guarded copy to nil: nothing else can reach it then.
/// Swift 6.0 (trixie's swiftlang) rejects returning a non-Sendable value read from
/// `withLock`'s `inout sending` state ("'inout sending' parameter cannot be task-isolated
/// at end of function"); 6.1 and later accept it, but the package must build with both.
// Unchecked: an OpaquePointer (not Sendable) its one taker carries out of a Mutex, which Swift 6.0 allows only if Sendable.
struct TakenGPIOHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
