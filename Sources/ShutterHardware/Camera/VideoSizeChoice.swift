// SPDX-License-Identifier: BSD-2-Clause
/// The video size to ask for again when the camera granted none of the asked
/// sizes, as pure rules over the sizes the video stream itself lists (libcamera's
/// `StreamFormats`, which the shim reads).
///
/// libcamera's `validate()` adjusts a size a pipeline lacks as that pipeline
/// pleases: the virtual pipeline (and any whose `validate()` says "adjusted to
/// the maximum") answers 1280x720 with its largest size, 4608x2592, which the
/// encoder cannot keep up with and which leaves no room for a still stream. So
/// the service picks among the listed sizes itself: the one nearest the first
/// preference, the next larger of the same aspect first, never the largest just
/// because the camera adjusted to it.
enum VideoSizeChoice {
    /// The listed sizes to try, best first, for `asked` (best first; the first
    /// one is the one to come near). Empty when nothing is listed or nothing was asked.
    ///
    /// 1. an asked size the stream lists, in the order asked;
    /// 2. sizes at least as large as the first preference on both sides, of its
    ///    aspect (1 % slack), smallest first: 1280x720 gets 1920x1080 before 4608x2592;
    /// 3. sizes at least as large on both sides, of another aspect, smallest first
    ///    (scaled down later rather than up);
    /// 4. smaller sizes of its aspect, largest first;
    /// 5. the other smaller ones, largest first.
    static func candidates(asked: [CameraSize], offered: [CameraSize]) -> [CameraSize] {
        guard let want = asked.first else { return [] }
        var out: [CameraSize] = []
        func add(_ sizes: [CameraSize]) {
            for size in sizes where !out.contains(size) { out.append(size) }
        }
        add(asked.filter(offered.contains))
        let covering = offered.filter { want.fits(in: $0) }
        let smaller = offered.filter { !want.fits(in: $0) }
        let byAreaUp: (CameraSize, CameraSize) -> Bool = { area($0) != area($1) ? area($0) < area($1) : $0.width < $1.width }
        let byAreaDown: (CameraSize, CameraSize) -> Bool = { area($0) != area($1) ? area($0) > area($1) : $0.width > $1.width }
        add(covering.filter { sameAspect($0, want) }.sorted(by: byAreaUp))
        add(covering.sorted(by: byAreaUp))
        add(smaller.filter { sameAspect($0, want) }.sorted(by: byAreaDown))
        add(smaller.sorted(by: byAreaDown))
        return out
    }

    /// Whether the granted size needs a second try: none of the asked sizes was granted.
    static func needsChoice(granted: CameraSize, asked: [CameraSize]) -> Bool {
        !asked.isEmpty && !asked.contains(granted)
    }

    /// The width:height ratios agree within 1 % (1366x768 is 16:9).
    static func sameAspect(_ a: CameraSize, _ b: CameraSize) -> Bool {
        guard a.height > 0, b.height > 0 else { return false }
        let ra = Double(a.width) / Double(a.height), rb = Double(b.width) / Double(b.height)
        return abs(ra - rb) <= 0.01 * rb
    }

    private static func area(_ s: CameraSize) -> Int { s.width * s.height }
}
