// SPDX-License-Identifier: BSD-2-Clause
/// Where a device's output goes, called on the device's own thread or queue: the
/// service's inbox (one hop to the loop, no task in between), or a stream for a test
/// or a tool. A sink never blocks its caller.

/// A started camera's frames.
public struct FrameSink: Sendable {
    /// A frame. Returns the older frame let go to make room, if one was (the camera
    /// counts it as dropped, and lets it go outside its own locks: its buffer comes back).
    public var deliver: @Sendable (Frame) -> Frame?
    /// The stream ended (stopped, unplugged, failed): no frame follows.
    public var ended: @Sendable () -> Void

    public init(deliver: @escaping @Sendable (Frame) -> Frame?, ended: @escaping @Sendable () -> Void) {
        self.deliver = deliver
        self.ended = ended
    }

    /// Frames into a stream that keeps the newest `depth` (a test's or a tool's consumer).
    public static func stream(depth: Int) -> (FrameSink, AsyncStream<Frame>) {
        let (stream, c) = AsyncStream.makeStream(of: Frame.self, bufferingPolicy: .bufferingNewest(max(1, depth)))
        let sink = FrameSink(deliver: { f in
            if case .dropped(let old) = c.yield(f) { return old }
            return nil
        }, ended: { c.finish() })
        return (sink, stream)
    }
}

/// A button's edges and its answers to `catchUp()`, in order. False: not taken (the
/// button counts the edge as dropped).
public typealias ButtonSink = @Sendable (ButtonEvent) -> Bool
