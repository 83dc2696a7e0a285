// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Giving the camera new controls, and the frames after it while they take hold.
///
/// The camera took new controls; the requests it had already queued still
/// complete with the old ones. Until `settleFrames` frames have come (or the
/// time passed), a reply waits, so a photo taken on its answer is exposed with
/// what it says.
struct ControlsDelivery {
    enum State: Equatable {
        case idle
        /// A job gives the camera these controls now.
        case giving(CameraControls)
        /// Given: this many frames more, or until then.
        case settling(frames: Int, until: MonotonicTime)
    }

    static let settleFrames = 6
    private(set) var state = State.idle
    /// The last two frames' timestamps: the wait for `settleFrames` scales with the
    /// frame rate (a 1 fps camera under emulation needs more than the 2 s floor).
    private var lastFrames: (MonotonicTime?, MonotonicTime?) = (nil, nil)

    /// Nothing being given, nothing settling: a reply may go.
    var isQuiet: Bool { state == .idle }

    var isGiving: Bool {
        if case .giving = state { return true }
        return false
    }

    /// When the settling ends at the latest.
    var deadline: MonotonicTime? {
        if case .settling(_, let until) = state { return until }
        return nil
    }

    mutating func give(_ controls: CameraControls) { state = .giving(controls) }

    /// The camera has them: at most 2 s, or twice the frames' time at the camera's own rate.
    mutating func given(now: MonotonicTime) {
        var bound = Duration.seconds(2)
        if let a = lastFrames.0, let b = lastFrames.1, b > a { bound = max(bound, (b - a) * (2 * Self.settleFrames)) }
        state = .settling(frames: Self.settleFrames, until: now + min(bound, .seconds(30)))
    }

    mutating func frameArrived(at t: MonotonicTime) {
        lastFrames = (lastFrames.1, t)
        if case .settling(let n, let until) = state { state = n > 1 ? .settling(frames: n - 1, until: until) : .idle }
    }

    /// A camera without frames holds no reply.
    mutating func expire(now: MonotonicTime) {
        if case .settling(_, let until) = state, now >= until { state = .idle }
    }

    /// The camera stopped: its frame rate is not the next one's.
    mutating func cameraLost() {
        lastFrames = (nil, nil)
    }
}
