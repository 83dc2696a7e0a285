// SPDX-License-Identifier: BSD-2-Clause
/// Offline replay of a recorded button trace (`shutterctl gestures FILE`): the
/// same recognizer as the daemon, fed from a file instead of GPIO.
///
/// The trace has one sample per line, `<ms> <0|1>` (integer milliseconds on a
/// monotonic clock, non-decreasing; 1 = pressed). The button starts released and
/// stable at the first line's time; a line repeating the level only marks time;
/// the input ends at the last line's time.
public enum GestureReplay {
    public struct Sample: Sendable, Equatable {
        public var ms: Int64
        public var pressed: Bool
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// One completed (or still open) gesture, as printed.
    public struct Gesture: Sendable, Equatable {
        public var name: String
        public var startMs: Int64
        /// nil: a hold still pressed when the input ended.
        public var endMs: Int64?

        public var json: String {
            "{\"gesture\":\"\(name)\",\"start_ms\":\(startMs),\"end_ms\":\(endMs.map(String.init) ?? "null")}"
        }
    }

    /// Parses the trace. Blank lines are skipped; anything else that is not
    /// `<integer> <0|1>`, or a time going backwards, is an error naming the line.
    public static func parse(_ text: String) throws -> [Sample] {
        var samples: [Sample] = []
        var lineNumber = 0
        // "\r\n" is one Character in Swift, so it is matched as a separator of its own.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.isEmpty { continue }
            guard fields.count == 2 else {
                throw ParseError(line: lineNumber,
                                 message: "expected `<ms> <0|1>`, got \"\(line)\"")
            }
            guard let ms = Int64(fields[0]) else {
                throw ParseError(line: lineNumber,
                                 message: "time \"\(fields[0])\" is not an integer number of milliseconds")
            }
            guard fields[1] == "0" || fields[1] == "1" else {
                throw ParseError(line: lineNumber,
                                 message: "level \"\(fields[1])\" must be 0 (released) or 1 (pressed)")
            }
            if let last = samples.last, ms < last.ms {
                throw ParseError(line: lineNumber,
                                 message: "time \(ms) goes backwards (previous line was \(last.ms)); times must be non-decreasing")
            }
            samples.append(Sample(ms: ms, pressed: fields[1] == "1"))
        }
        return samples
    }

    /// Runs the recognizer over the samples and returns the gestures in order.
    public static func run(_ samples: [Sample], settings: GestureSettings) -> [Gesture] {
        guard let first = samples.first, let last = samples.last else { return [] }
        var recognizer = GestureRecognizer(settings: settings)
        var events = recognizer.advance(to: .milliseconds(first.ms))
        for s in samples {
            events += recognizer.feed(ButtonEdge(pressed: s.pressed, time: .milliseconds(s.ms)))
        }
        events += recognizer.finish(at: .milliseconds(last.ms))
        return gestures(from: events)
    }

    /// The printable gestures of an event stream; a hold that started but has not
    /// ended is reported open (end nil), after every gesture that began before it.
    public static func gestures(from events: [GestureEvent]) -> [Gesture] {
        var out: [Gesture] = []
        var openHold: MonotonicTime?
        for e in events {
            switch e {
            case let .tap(s, e): out.append(Gesture(name: "tap", startMs: s.milliseconds, endMs: e.milliseconds))
            case let .doubleTap(s, e):
                out.append(Gesture(name: "double_tap", startMs: s.milliseconds, endMs: e.milliseconds))
            case let .holdStarted(p, _): openHold = p
            case let .hold(s, e):
                openHold = nil
                out.append(Gesture(name: "hold", startMs: s.milliseconds, endMs: e.milliseconds))
            case let .shutdown(s, e):
                out.append(Gesture(name: "shutdown", startMs: s.milliseconds, endMs: e.milliseconds))
            case .pressed, .shutdownCountdown, .shutdownCancelled:
                break
            }
        }
        if let p = openHold { out.append(Gesture(name: "hold", startMs: p.milliseconds, endMs: nil)) }
        return out
    }
}
