// SPDX-License-Identifier: BSD-2-Clause
extension ShutterConfig {
    /// Trigger inputs (docs/triggers.md): GPIO lines besides the button (a PIR sensor, a door
    /// contact, a second button), each a way in to the same capture path as the button.
    public struct Triggers: Codable, Equatable, Sendable {
        /// The inputs, each `{"name", "line", "action", …}` (`Input`); [] = none. Default [].
        public var inputs: [Input] = []

        public init(inputs: [Input] = []) { self.inputs = inputs }

        /// What an input's activation does.
        public enum Action: String, Codable, Sendable, CaseIterable {
            /// One photo, as a tap's.
            case photo
            /// `burstCount` photos, one after the other.
            case burst
            /// A clip that lasts while the input is active and `clipAfterSeconds` more.
            case clip
        }

        /// One trigger input. Every field but `name` and `line` has a default; the schema
        /// (`ConfigSchema`, kind `triggerInputs`) fills them in before decoding.
        public struct Input: Codable, Equatable, Sendable {
            /// Its name in the events, MQTT, the page and the log: letters, digits, '-' and '_', 1...32.
            public var name: String
            /// The GPIO line, as `gpio.button` takes it: a name ("GPIO23") or an offset (23).
            public var line: String
            /// The line reads 0 while active (a contact to ground with a pull-up). Default false
            /// (a PIR's output is high on motion).
            public var activeLow = false
            /// "pull-up", "pull-down", "disabled" or "as-is". Default "as-is".
            public var bias = GPIO.Bias.asIs
            /// A level counts once steady this long (contact bounce). Default 20, 0...500 ms.
            public var stabilityMs = 20
            /// An activation sooner than this after the one that last fired fires nothing (a
            /// clip's is kept going instead). Default 5, 0...3600 s.
            public var holdOffSeconds = 5.0
            /// "photo", "burst" or "clip". Default "photo".
            public var action = Action.photo
            /// Photos in a burst. Default 3, 2...20.
            public var burstCount = 3
            /// A clip goes on this long after the input was last active. Default 10, 0...600 s.
            public var clipAfterSeconds = 10
            /// Daily windows in local time, as `interval.windows` ("22:00-06:00"); outside them
            /// an activation fires nothing; read only from a trusted wall clock. Default "" (all day).
            public var windows = ""

            public init(name: String, line: String, activeLow: Bool = false, bias: GPIO.Bias = .asIs,
                        stabilityMs: Int = 20, holdOffSeconds: Double = 5, action: Action = .photo,
                        burstCount: Int = 3, clipAfterSeconds: Int = 10, windows: String = "") {
                self.name = name
                self.line = line
                self.activeLow = activeLow
                self.bias = bias
                self.stabilityMs = stabilityMs
                self.holdOffSeconds = holdOffSeconds
                self.action = action
                self.burstCount = burstCount
                self.clipAfterSeconds = clipAfterSeconds
                self.windows = windows
            }

            /// The fields in the order the docs list them.
            public static let fields = ["name", "line", "activeLow", "bias", "stabilityMs", "holdOffSeconds", "action",
                                        "burstCount", "clipAfterSeconds", "windows"]
        }
    }
}
