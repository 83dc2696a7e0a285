// SPDX-License-Identifier: BSD-2-Clause
/// Interval capture as it stands (`status.interval`, `shutterctl interval status`): the
/// schedule, which clock it runs on, and what it has done.
public struct IntervalReport: Codable, Sendable, Equatable {
    /// `interval.enabled`.
    public var enabled: Bool
    /// `shutterctl interval pause` holds it until `resume` (kept across restarts).
    public var paused: Bool = false
    /// "wall" (a trusted wall clock: slots in local time, windows read) or "monotonic"
    /// (no trusted time yet: slots on the time since boot).
    public var clock: String
    public var everySeconds: Int
    /// `interval.windows` ("" = all day).
    public var windows: String = ""
    /// `interval.count`: photos in all; 0 = no limit.
    public var count: Int = 0
    /// Photos taken at slots (since the last `interval reset`), and slots passed by: a clip
    /// recording or a photo in progress at the slot, or the camera not ready.
    public var taken: Int = 0
    public var skipped: Int = 0
    /// Interval photos that were asked for and failed (not counted in `taken`).
    public var failed: Int = 0
    /// The next slot in local time ("2026-12-05T12:01:00+01:00"; with the wall clock only),
    /// and in seconds from now (either clock); absent when none comes (`waiting` says why).
    public var nextSlot: String? = nil
    public var nextInSeconds: Double? = nil
    /// The last slot taken or skipped, in local time (wall clock only), and in seconds on
    /// its clock's timeline (local seconds since the epoch, or seconds since boot).
    public var lastSlot: String? = nil
    public var lastSlotSeconds: Int64? = nil
    /// Why no slot comes: paused, the count reached, windows without a trusted clock.
    public var waiting: String? = nil

    public init(enabled: Bool, clock: String, everySeconds: Int) {
        self.enabled = enabled
        self.clock = clock
        self.everySeconds = everySeconds
    }

    private enum CodingKeys: String, CodingKey {
        case enabled, paused, clock, everySeconds, windows, count, taken, skipped, failed
        case nextSlot, nextInSeconds, lastSlot, lastSlotSeconds, waiting
    }

    // By hand: a key an older or newer shutterd did not write is its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled) ?? false
        paused = try c.decodeIfPresent(Bool.self, forKey: .paused) ?? false
        clock = try c.decodeIfPresent(String.self, forKey: .clock) ?? "monotonic"
        everySeconds = try c.decodeIfPresent(Int.self, forKey: .everySeconds) ?? 0
        windows = try c.decodeIfPresent(String.self, forKey: .windows) ?? ""
        count = try c.decodeIfPresent(Int.self, forKey: .count) ?? 0
        taken = try c.decodeIfPresent(Int.self, forKey: .taken) ?? 0
        skipped = try c.decodeIfPresent(Int.self, forKey: .skipped) ?? 0
        failed = try c.decodeIfPresent(Int.self, forKey: .failed) ?? 0
        nextSlot = try c.decodeIfPresent(String.self, forKey: .nextSlot)
        nextInSeconds = try c.decodeIfPresent(Double.self, forKey: .nextInSeconds)
        lastSlot = try c.decodeIfPresent(String.self, forKey: .lastSlot)
        lastSlotSeconds = try c.decodeIfPresent(Int64.self, forKey: .lastSlotSeconds)
        waiting = try c.decodeIfPresent(String.self, forKey: .waiting)
    }
}
