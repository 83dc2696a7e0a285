// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import ShutterCore
import Synchronization

/// The time stamp in the picture (docs/overlay.md): for a frame's exposure start, the stamp
/// of that second at the frame's size and its place in the corner. The text is rendered
/// once per second and size (FreeType, `OverlayFont`) and kept; the second after it is
/// rendered ahead on this type's queue as soon as a second is first asked for, so a frame
/// only blends a bitmap that is ready (`placed` renders on the caller's thread only on a
/// miss: the first frame, or after a clock jump; counted in `figures`).
///
/// Only a trusted wall clock (NTP, an RTC) dates a picture: untrusted, the time is left
/// out (the name alone is drawn, if set), as EXIF leaves its dates out: a wrong time
/// burned in cannot be taken back, and a boot-relative time would be read as a time of day.
///
/// Wall time is read once per second (an anchor against the monotonic clock), not per frame.
public final class TextOverlay: Sendable, Equatable {
    public struct Style: Sendable, Equatable {
        public var format: String
        public var name: String
        public var position: ShutterConfig.Overlay.Position
        /// The text's height in percent of the picture's height.
        public var sizePercent: Int
        /// How much the box darkens the picture behind the text, 0...255.
        public var box = 128

        public init(format: String, name: String, position: ShutterConfig.Overlay.Position, sizePercent: Int) {
            self.format = format
            self.name = name
            self.position = position
            self.sizePercent = sizePercent
        }

        public init(_ c: ShutterConfig.Overlay) {
            self.init(format: c.format, name: c.name, position: c.position, sizePercent: c.size)
        }
    }

    /// How often a stamp was ready, and how often a frame's thread had to render one.
    public struct Figures: Sendable, Equatable {
        public var rendered = 0
        public var renderedAhead = 0
        public var misses = 0
        public var trusted: Bool?
    }

    private struct Size: Hashable {
        var width: Int
        var height: Int
    }

    private struct Key: Hashable {
        /// Local seconds, or nil: no time (untrusted clock).
        var second: Int64?
        /// The UTC offset then (%z).
        var utcOffset: Int32
        var pixelHeight: Int
        var maxWidth: Int
    }

    private struct State {
        var anchor: (mono: MonotonicTime, wall: WallTime)?
        /// Picture sizes stamped or prepared so far: each gets its next second ahead.
        var sizes: Set<Size> = []
        /// The last second `prepare` looked at.
        var prepared: Int64?
        var stamps: [Key: OverlayStamp] = [:]
        /// Texts that do not fit their picture even made smaller: nothing drawn, not tried again.
        var unfit: Set<Key> = []
        var warnedUnfit = false
        /// Asked for ahead, on `queue`.
        var ahead: Set<Key> = []
        var figures = Figures()
    }

    public let style: Style
    private let font: OverlayFont
    private let clock: any MonotonicClock
    private let wallClock: any WallClock
    /// Where the renders ahead count as work in flight (a manual-clock test waits for them).
    private let work: Mutex<InFlight?>
    // Shared by every frame's thread (the encoders', the photo queue) and `queue`: a cache.
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "shutter.overlay", qos: .utility)
    private let log = Log("shutter.overlay")

    public init(style: Style, font: OverlayFont, clock: any MonotonicClock, wallClock: any WallClock,
                work: InFlight? = nil) {
        self.style = style
        self.font = font
        self.clock = clock
        self.wallClock = wallClock
        self.work = Mutex(work)
    }

    /// Counts the renders ahead in `work` (the service's count, made after the overlay).
    public func count(in work: InFlight) { self.work.withLock { $0 = work } }

    public static func == (a: TextOverlay, b: TextOverlay) -> Bool { a === b }

    public var figures: Figures { state.withLock { $0.figures } }

    /// The text's pixel height, its box's margin and its distance from the edges in a picture `height` high.
    public func metrics(height: Int) -> (pixelHeight: Int, pad: Int, margin: Int) {
        let px = max(8, height * style.sizePercent / 100)
        return (px, max(2, px / 5), max(2, px / 2))
    }

    /// The stamp for a frame exposed at `t`, placed in a `width` x `height` picture; nil when
    /// there is nothing to draw (untrusted clock and no name) or it cannot fit.
    public func placed(at t: MonotonicTime, width: Int, height: Int) -> OverlayStamp.Placed? {
        let (px, pad, margin) = metrics(height: height)
        let maxWidth = width - 2 * (margin & ~1)
        let fresh = freshWall()
        var changed: Bool?
        let (key, hit, aheadKey) = state.withLock { s -> (Key?, OverlayStamp?, Key?) in
            changed = Self.anchor(&s, fresh)
            s.sizes.insert(Size(width: width, height: height))
            let a = s.anchor!
            let wall = a.wall.adding(t - a.mono)
            guard wall.isTrusted || !style.name.isEmpty else { return (nil, nil, nil) }
            let second = wall.isTrusted ? wall.secondsSinceEpoch + Int64(wall.utcOffsetSeconds) : nil
            let key = Key(second: second, utcOffset: wall.utcOffsetSeconds, pixelHeight: px, maxWidth: maxWidth)
            if let stamp = s.stamps[key] { return (key, stamp, nil) }
            if s.unfit.contains(key) { return (nil, nil, nil) }
            s.figures.misses += 1
            var next: Key?
            if let second {
                let k = Key(second: second + 1, utcOffset: key.utcOffset, pixelHeight: px, maxWidth: maxWidth)
                if s.stamps[k] == nil, !s.ahead.contains(k), !s.unfit.contains(k) { s.ahead.insert(k); next = k }
            }
            return (key, nil, next)
        }
        say(changed)
        guard let key else { return nil }
        if let hit {
            askAhead(after: key)
            return placed(hit, width: width, height: height, margin: margin)
        }
        guard let stamp = render(key, pad: pad) else {
            unfit(key, width: width, height: height)
            return nil
        }
        state.withLock { s in
            s.stamps[key] = stamp
            s.figures.rendered += 1
        }
        if let aheadKey { renderAhead(aheadKey, pad: pad) }
        return placed(stamp, width: width, height: height, margin: margin)
    }

    /// A frame reached the service (the loop, every frame; a lookup when the second is
    /// unchanged): the stamps of its second and the next, for every size seen (the video's,
    /// the still stream's, a still's), rendered ahead on `queue` where missing, so a press's
    /// photo finds its stamp ready even when no encoder has been stamping frames.
    public func prepare(at t: MonotonicTime, sizes: [(width: Int, height: Int)]) {
        let fresh = freshWall()
        var changed: Bool?
        let wanted = state.withLock { s -> [(Key, Int)] in
            changed = Self.anchor(&s, fresh)
            for size in sizes { s.sizes.insert(Size(width: size.width, height: size.height)) }
            let a = s.anchor!
            let wall = a.wall.adding(t - a.mono)
            guard wall.isTrusted || !style.name.isEmpty else { return [] }
            let second = wall.isTrusted ? wall.secondsSinceEpoch + Int64(wall.utcOffsetSeconds) : nil
            if let second, s.prepared == second { return [] }
            s.prepared = second
            var keys: [(Key, Int)] = []
            let seconds: [Int64?] = second.map { [$0, $0 + 1] } ?? [nil]
            for size in s.sizes {
                let (px, pad, margin) = metrics(height: size.height)
                let maxWidth = size.width - 2 * (margin & ~1)
                for next in seconds {
                    let k = Key(second: next, utcOffset: wall.utcOffsetSeconds, pixelHeight: px, maxWidth: maxWidth)
                    if s.stamps[k] == nil, !s.ahead.contains(k), !s.unfit.contains(k) {
                        s.ahead.insert(k)
                        keys.append((k, pad))
                    }
                }
            }
            return keys
        }
        say(changed)
        for (k, pad) in wanted { renderAhead(k, pad: pad) }
    }

    /// The wall clock (a few syscalls for the system's) once a second, read outside the lock.
    private func freshWall() -> (mono: MonotonicTime, wall: WallTime)? {
        let now = clock.now()
        let stale = state.withLock { s in s.anchor.map { now - $0.mono >= .seconds(1) || now < $0.mono } ?? true }
        return stale ? (now, wallClock.now()) : nil
    }

    /// A new anchor (wall time against the monotonic clock); the trust, if it changed.
    private static func anchor(_ s: inout State, _ fresh: (mono: MonotonicTime, wall: WallTime)?) -> Bool? {
        guard let fresh else { return nil }
        let changed: Bool? = s.figures.trusted != fresh.wall.isTrusted ? fresh.wall.isTrusted : nil
        s.figures.trusted = fresh.wall.isTrusted
        s.anchor = fresh
        return changed
    }

    private func say(_ changed: Bool?) {
        guard let changed else { return }
        log.notice(changed ? "the wall clock is trusted: the time is drawn into pictures"
                   : "the wall clock is not trusted (no time sync, no RTC): no time is drawn into pictures until it is")
    }

    private func placed(_ stamp: OverlayStamp, width: Int, height: Int, margin: Int) -> OverlayStamp.Placed? {
        stamp.placed(at: style.position, width: width, height: height, margin: margin)
    }

    /// A hit: the next second rendered ahead, once.
    private func askAhead(after key: Key) {
        guard let second = key.second else { return }
        let next = Key(second: second + 1, utcOffset: key.utcOffset, pixelHeight: key.pixelHeight, maxWidth: key.maxWidth)
        let ask = state.withLock { s -> Bool in
            guard s.stamps[next] == nil, !s.ahead.contains(next), !s.unfit.contains(next) else { return false }
            s.ahead.insert(next)
            return true
        }
        if ask { renderAhead(next, pad: max(2, key.pixelHeight / 5)) }
    }

    private func renderAhead(_ key: Key, pad: Int) {
        let work = self.work.withLock { $0 }
        work?.begin()
        queue.async { [self] in
            defer { work?.end() }
            let stamp = render(key, pad: pad)
            state.withLock { s in
                s.ahead.remove(key)
                if let stamp { s.stamps[key] = stamp; s.figures.renderedAhead += 1 } else { s.unfit.insert(key) }
                // Keep this second and the next few: older ones are never asked for again.
                if let second = key.second {
                    s.stamps = s.stamps.filter { $0.key.second.map { $0 >= second - 2 } ?? true }
                    s.unfit = s.unfit.filter { $0.second.map { $0 >= second - 2 } ?? true }
                }
            }
        }
    }

    /// A text that cannot be drawn in its picture: remembered (not rendered again per frame)
    /// and said once.
    private func unfit(_ key: Key, width: Int, height: Int) {
        let first = state.withLock { s -> Bool in
            defer { s.unfit.insert(key); s.warnedUnfit = true }
            return !s.warnedUnfit
        }
        if first {
            log.warning("the time stamp does not fit a \(width)x\(height) picture at overlay.size \(style.sizePercent)%, "
                        + "even made smaller: nothing is drawn there; take a shorter overlay.format or overlay.name")
        }
    }

    /// The key's text, made smaller when it is wider than the picture allows.
    private func render(_ key: Key, pad: Int) -> OverlayStamp? {
        let text = OverlayText.text(format: style.format, name: style.name, localSeconds: key.second,
                                    utcOffsetSeconds: key.utcOffset)
        guard var stamp = font.render(text, pixelHeight: key.pixelHeight, pad: pad, box: style.box) else { return nil }
        if stamp.width > key.maxWidth, key.maxWidth > 0 {
            let px = key.pixelHeight * key.maxWidth / stamp.width
            guard px >= 6, let smaller = font.render(text, pixelHeight: px, pad: max(2, px / 5), box: style.box),
                  smaller.width <= key.maxWidth else { return nil }
            stamp = smaller
        }
        return stamp
    }
}
