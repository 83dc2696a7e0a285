// SPDX-License-Identifier: BSD-2-Clause
import CLibcameraShim

// Sendable wrappers for the shim's opaque pointers. The pointees are guarded
// inside the shim: the manager by its global manager mutex (gManagerMutex),
// a camera by its CameraState::lifecycleMutex (configure/start/stop/close),
// stateMutex (short sections) and queueMutex (the completion queue), so any
// thread may call through them.

// Unchecked: the shim's camera manager, whose calls lock gManagerMutex (see above).
struct ShimManagerHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

// Unchecked: a shim camera, whose calls lock its CameraState's mutexes (see above).
struct ShimCameraHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A completed frame's claim on its request; released exactly once (Frame's deinit).
/// Releasing requeues the request under stateMutex, never a stop's lock.
// Unchecked: only shc_frame_release touches it, and it checks the token's session atomically.
struct ShimFrameToken: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer

    func release() { shc_frame_release(pointer) }
}

/// A token shared by the frames of one request (a video frame and its still
/// companion): the request goes back to the camera when the last of them is gone,
/// so a still frame being encoded keeps its buffer after the video frame is dropped.
final class ShimFrameClaim: Sendable {
    // Immutable; the token is released once, in deinit.
    private let token: ShimFrameToken

    init(_ token: ShimFrameToken) { self.token = token }

    deinit { token.release() }
}

extension String {
    /// A String from a fixed-size C char array imported as a tuple.
    init<T>(cTuple: T) {
        self = withUnsafeBytes(of: cTuple) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
    }
}
