// SPDX-License-Identifier: BSD-2-Clause
/// Which still stream to run beside video for the `press` moment (docs/control-and-api.md
/// "The moment of the press"), as pure rules the camera applies to what the pipeline
/// answers.
///
/// On a Raspberry Pi the sensor mode follows the largest output stream, not the
/// frame rate (docs/control-and-api.md, The moment of the press): a 4608×2592 still stream beside
/// 1080p video puts Camera Module 3 in its full mode, ≤ 14.35 fps for both
/// streams. So each candidate is configured in turn and kept only when the
/// configured mode's shortest frame (the FrameDurationLimits minimum the
/// Raspberry Pi IPA sets at configure) still allows the asked video rate: on
/// Camera Module 3 at 30 fps that is 2304×1296 (the 56 fps binned mode), at
/// ≤ 14 fps the full 4608×2592.
enum StillStreamChoice {
    /// The sizes to try, best first: the `still.sizes` preferences, then the
    /// sensor's own sizes (its modes, largest first), each only once and only
    /// when larger than the video stream (a still stream no larger than video
    /// adds nothing, and the pipeline sizes the second output from the first).
    static func candidates(stillSizes: [CameraSize], sensorSizes: [CameraSize], video: CameraSize) -> [CameraSize] {
        var out: [CameraSize] = []
        for size in stillSizes + sensorSizes.sorted(by: { $0.width * $0.height > $1.width * $1.height })
        where isLarger(size, than: video) && !out.contains(size) {
            out.append(size)
        }
        return out
    }

    /// At least as large as `video` on both sides, and larger in area.
    static func isLarger(_ size: CameraSize, than video: CameraSize) -> Bool {
        video.fits(in: size) && size.width * size.height > video.width * video.height
    }

    /// Whether a configured mode whose shortest frame is `minimumFrameMicroseconds`
    /// can run video at `framesPerSecond` (1 % slack for the sensor's own rounding:
    /// 33 334 µs is 30 fps). Unknown limits (a pipeline without FrameDurationLimits)
    /// or no asked rate (0: the pipeline's own) keep it.
    static func keepsRate(minimumFrameMicroseconds: Double?, framesPerSecond: Double) -> Bool {
        guard let minimum = minimumFrameMicroseconds, minimum > 0, framesPerSecond > 0 else { return true }
        return minimum <= 1_000_000 / framesPerSecond * 1.01
    }

    /// The fastest rate a mode of that shortest frame runs at, for the log ("14.3 fps").
    static func fastestRate(minimumFrameMicroseconds: Double) -> String {
        let fps = 1_000_000 / minimumFrameMicroseconds
        return "\((fps * 10).rounded() / 10) fps"
    }

    /// What configuring one candidate beside video gave.
    enum Attempt: Equatable {
        /// The pipeline makes or keeps one stream only (vimc truncates to one): no use trying others.
        case oneStream
        /// Not this size (or only by changing the video stream).
        case notGranted
        /// Configured; the mode's shortest frame in µs, when the camera reports it.
        case granted(minimumFrameMicroseconds: Double?)
    }

    enum Outcome: Equatable {
        case stillStream(CameraSize)
        /// Video alone, and why.
        case none(String)
    }

    /// Tries the candidates best first (`attempt` configures one) and keeps the
    /// first granted one that keeps the video rate; stops at a one-stream pipeline.
    static func choose(candidates: [CameraSize], video: CameraSize, framesPerSecond: Double,
                       attempt: (CameraSize) throws -> Attempt) rethrows -> Outcome {
        guard !candidates.isEmpty else { return .none("no still size larger than the video's \(video)") }
        var refused: [String] = []
        for size in candidates {
            switch try attempt(size) {
            case .oneStream:
                return .none("the camera's pipeline gives one stream only")
            case .notGranted:
                refused.append("\(size) not granted beside \(video)")
            case .granted(let shortest):
                if keepsRate(minimumFrameMicroseconds: shortest, framesPerSecond: framesPerSecond) {
                    return .stillStream(size)
                }
                refused.append("\(size) only at \(fastestRate(minimumFrameMicroseconds: shortest ?? 0))")
            }
        }
        let rate = framesPerSecond.rounded() == framesPerSecond ? "\(Int(framesPerSecond))" : "\(framesPerSecond)"
        return .none("none beside \(rate) fps video: " + refused.joined(separator: ", "))
    }
}

extension StillStreamChoice {
    /// The sizes to take candidates from beyond `still.sizes`: the sensor's modes
    /// (the Raw role's sizes) where the pipeline has a Raw role, else the sizes
    /// the StillCapture role's own stream lists (the virtual pipeline: no Raw
    /// role, a still stream of any listed size up to 4608x2592).
    static func offeredSizes(sensor: [CameraSize], stillRole: [CameraSize]) -> [CameraSize] {
        sensor.isEmpty ? stillRole : sensor
    }
}
