// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// A camera frame copied into recording-owned memory, so the camera's buffer goes back
/// to it at once and the encoder may take its time.
final class QueuedFrame {
    let width: Int
    let height: Int
    let format: PixelFormat
    let timestamp: MonotonicTime
    let exposureStart: MonotonicTime
    let buffer: OwnedFrameBuffer
    private(set) var offsets: [Int] = []
    private(set) var strides: [Int] = []
    /// When it was queued (the recording queue's clock): how long it waited for the encoder.
    var queuedAt = MonotonicTime(nanoseconds: 0)

    /// `buffer` must hold at least `byteCount(of: frame)` bytes.
    init(copying frame: Frame, into buffer: OwnedFrameBuffer) {
        width = frame.width
        height = frame.height
        format = frame.format
        timestamp = frame.timestamp
        exposureStart = frame.exposureStart
        self.buffer = buffer
        var offset = 0
        for plane in frame.planes {
            (buffer.bytes + offset).copyMemory(from: plane.base, byteCount: plane.length)
            offsets.append(offset)
            strides.append(plane.stride)
            offset += plane.length
        }
    }

    /// Blends the time stamp of its exposure's second into the copy.
    func stamp(_ overlay: TextOverlay) {
        guard let p = overlay.placed(at: exposureStart, width: width, height: height) else { return }
        OverlayStamp.draw(p, format: format, planes: offsets.map { buffer.bytes + $0 }, strides: strides)
    }

    static func byteCount(of frame: Frame) -> Int { frame.planes.reduce(0) { $0 + $1.length } }
}
