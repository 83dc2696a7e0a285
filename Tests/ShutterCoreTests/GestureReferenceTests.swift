// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// Compares the incremental recognizer with a second, deliberately naive reading
/// of the same rules (whole trace at once) on thousands of random traces.
final class GestureReferenceTests: XCTestCase {
    /// The rules of issue 2, written as plainly as possible.
    static func reference(_ samples: [GestureReplay.Sample], _ s: GestureSettings) -> [GestureReplay.Gesture] {
        guard let first = samples.first, let last = samples.last else { return [] }
        // Raw level changes.
        var edges: [(t: Int64, level: Bool)] = []
        var raw = false
        for x in samples where x.pressed != raw { raw = x.pressed; edges.append((x.ms, x.pressed)) }
        _ = first
        // Accepted changes.
        var changes: [(t: Int64, level: Bool)] = []
        var stable = false
        var i = 0
        scan: while i < edges.count {
            var j = i
            while true {
                let nextT = j + 1 < edges.count ? edges[j + 1].t : nil
                if let n = nextT {
                    if n - edges[j].t >= s.stabilityMs { break }
                    j += 1
                } else {
                    if last.ms - edges[j].t >= s.stabilityMs { break }
                    break scan  // unresolved at the end
                }
            }
            if edges[j].level != stable { stable = edges[j].level; changes.append((edges[i].t, stable)) }
            i = j + 1
        }
        // Presses and their releases.
        enum Kind { case tap, hold }
        var items: [(kind: Kind, p: Int64, e: Int64?)] = []
        var k = 0
        while k < changes.count {
            let p = changes[k].t
            if k + 1 < changes.count {
                let r = changes[k + 1].t
                if r - p >= s.maxHoldMs { items.append((.hold, p, p + s.maxHoldMs)) }
                else if r - p >= s.holdMs { items.append((.hold, p, r)) }
                else { items.append((.tap, p, r)) }
            } else {
                if last.ms - p >= s.maxHoldMs { items.append((.hold, p, p + s.maxHoldMs)) }
                else if last.ms - p >= s.holdMs { items.append((.hold, p, nil)) }
            }
            k += 2
        }
        var out: [GestureReplay.Gesture] = []
        var n = 0
        while n < items.count {
            let a = items[n]
            if a.kind == .tap, s.doubleTapMs > 0, n + 1 < items.count, items[n + 1].kind == .tap,
               items[n + 1].p - a.e! <= s.doubleTapMs {
                out.append(.init(name: "double_tap", startMs: a.p, endMs: items[n + 1].e))
                n += 2
                continue
            }
            out.append(.init(name: a.kind == .tap ? "tap" : "hold", startMs: a.p, endMs: a.e))
            n += 1
        }
        return out
    }

    func testRandomTracesAgreeWithTheReference() {
        var rng = SplitMix(seed: 0x5EED)
        for round in 0..<4000 {
            let settings = GestureSettings(
                stabilityMs: Int64(rng.next(31)), holdMs: Int64(50 + rng.next(400)),
                doubleTapMs: rng.next(2) == 0 ? 0 : Int64(rng.next(200)),
                maxHoldMs: Int64(500 + rng.next(1500)), shutdownTaps: 0)
            var t = Int64(rng.next(1000))
            var samples: [GestureReplay.Sample] = []
            for _ in 0..<(1 + rng.next(60)) {
                switch rng.next(4) {
                case 0: t += Int64(rng.next(5))        // bounce
                case 1: t += Int64(rng.next(40))       // around the filter
                case 2: t += Int64(rng.next(600))      // around holdMs / double tap
                default: t += Int64(rng.next(2500))    // around max
                }
                samples.append(.init(ms: t, pressed: rng.next(2) == 1))
            }
            let got = GestureReplay.run(samples, settings: settings)
            let want = Self.reference(samples, settings)
            if got != want {
                XCTFail("round \(round) \(settings)\ntrace: \(samples.map { "\($0.ms) \($0.pressed ? 1 : 0)" }.joined(separator: ", "))\ngot  \(got.map(\.json))\nwant \(want.map(\.json))")
                return
            }
        }
    }
}

/// A small deterministic PRNG so a failure reproduces.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z % UInt64(bound))
    }
}
