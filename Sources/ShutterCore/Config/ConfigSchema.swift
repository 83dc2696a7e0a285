// SPDX-License-Identifier: BSD-2-Clause
/// The table of every configuration key: its type and what values are allowed.
/// Validation, command-line parsing and "did you mean" all read this table;
/// a test checks it matches `ShutterConfig` key for key.
public enum ConfigSchema {
    public enum Kind: Sendable {
        case int(ClosedRange<Int>, evenOnly: Bool = false)
        case intChoice([Int])
        /// A number; `nullable` keys accept null (= unknown).
        case double(ClosedRange<Double>, nullable: Bool = false)
        case bool
        case string(allowEmpty: Bool)
        case choice([String])
        /// A list of some of these, each at most once (may be empty).
        case choiceList([String])
        /// A board name: used as a file name, so a safe one.
        case identifier
        /// A GPIO line: a name, or an offset written as a number or digits.
        case gpioLine(allowEmpty: Bool)
        /// 0 (= automatic) or a number in the range.
        case autoOrDouble(ClosedRange<Double>)
        /// A fixed-length array of numbers, one per name (`[red, blue]`), or null.
        case numbers([String], ClosedRange<Double>, nullable: Bool)
        /// A rectangle [x, y, width, height] inside the unit square (normalised
        /// image coordinates), with a non-zero size, or null.
        case normalisedRect(nullable: Bool)
        /// Frame sizes best first, each "WIDTHxHEIGHT" (a single string is a
        /// list of one), or null: then the key's `width` and `height` keys.
        case sizeList(width: ClosedRange<Int>, height: ClosedRange<Int>, evenOnly: Bool)
        /// The simulated board's cameras, in libcamera's order: each a model
        /// name, or {"model": …, "broken": true|false, "maxSize": "WIDTHxHEIGHT"}; null = one camera.
        case simCameras
        /// [width, height] in pixels, each even and in the range, or null.
        case pixelSize(ClosedRange<Int>, nullable: Bool)
        /// "" (none) or one size "WIDTHxHEIGHT", both even and in the ranges.
        case frameSize(width: ClosedRange<Int>, height: ClosedRange<Int>)
        /// "HOST:PORT" with a numeric IPv4 host or a bracketed IPv6 one.
        case listenAddress
        /// "" or an Argon2id hash string ("$argon2id$v=19$m=…").
        case passwordHash
        /// An MQTT broker: "mqtt://HOST[:PORT]" or "mqtts://HOST[:PORT]".
        case brokerURL
        /// A name in MQTT topics and Home Assistant ids: [a-z0-9_-], at most 64; "" allowed (a default).
        case topicName
        /// An MQTT topic to publish under: levels of printable characters without the
        /// wildcards + and # or a leading or trailing "/"; "" allowed when `allowEmpty` (a default).
        case topic(allowEmpty: Bool)
        /// Daily windows "HH:MM-HH:MM,HH:MM-HH:MM" (IntervalPlan.windows); "" = all day.
        case dailyWindows
        /// `triggers.inputs`: a list of trigger inputs (TriggerInputsCheck.swift).
        case triggerInputs

        /// What is allowed, in words, for error messages.
        public var allowed: String {
            switch self {
            case .int(let r, let even): return "an integer in \(r.lowerBound)...\(r.upperBound)\(even ? ", even" : "")"
            case .intChoice(let c): return "one of " + c.map(String.init).joined(separator: ", ")
            case .double(let r, let nullable):
                return "a number in \(Self.short(r.lowerBound))...\(Self.short(r.upperBound))\(nullable ? " or null" : "")"
            case .bool: return "true or false"
            case .string(let allowEmpty): return allowEmpty ? "a string" : "a non-empty string"
            case .choice(let c): return "one of " + c.map { "\"\($0)\"" }.joined(separator: ", ")
            case .choiceList(let c): return "a list of " + c.map { "\"\($0)\"" }.joined(separator: ", ") + ", each at most once"
            case .identifier: return "a name of letters, digits, '-' and '_'"
            case .gpioLine(let allowEmpty):
                return "a line name (\"GPIO17\") or offset (17)\(allowEmpty ? ", or \"\" for none" : "")"
            case .autoOrDouble(let r):
                return "0 (automatic) or a number in \(Self.short(r.lowerBound))...\(Self.short(r.upperBound))"
            case .numbers(let names, let r, let nullable):
                return "[\(names.joined(separator: ", "))], each a number in \(Self.short(r.lowerBound))...\(Self.short(r.upperBound))"
                    + (nullable ? ", or null" : "")
            case .normalisedRect(let nullable):
                return "[x, y, width, height] inside 0...1 (width and height above 0, x + width and y + height at most 1)"
                    + (nullable ? ", or null" : "")
            case .sizeList(let w, let h, let even):
                return "null or a list of sizes \"WIDTHxHEIGHT\", best first (width \(w.lowerBound)...\(w.upperBound), "
                    + "height \(h.lowerBound)...\(h.upperBound)\(even ? ", both even" : ""))"
            case .simCameras:
                return "null or a list of 1...8 cameras, each a model name or {\"model\": NAME, \"broken\": true|false, "
                    + "\"maxSize\": \"WIDTHxHEIGHT\", \"sensorHdr\": true|false, \"startDelayMs\": 0...30000}"
            case .pixelSize(let r, let nullable):
                return "[width, height], each an even integer in \(r.lowerBound)...\(r.upperBound)" + (nullable ? ", or null" : "")
            case .frameSize(let w, let h):
                return "\"\" or a size \"WIDTHxHEIGHT\" (width \(w.lowerBound)...\(w.upperBound), "
                    + "height \(h.lowerBound)...\(h.upperBound), both even)"
            case .listenAddress:
                return "\"HOST:PORT\" with a numeric IPv4 address or a bracketed IPv6 one (\"0.0.0.0:8080\", \"[::]:8080\"), port 0...65535"
            case .passwordHash:
                return "\"\" or an Argon2id hash as `shutterctl web-password` prints it (\"$argon2id$v=19$m=…\")"
            case .brokerURL:
                return "\"mqtt://HOST:PORT\" or \"mqtts://HOST:PORT\" (port 1...65535; 1883 and 8883 when left out)"
            case .topicName:
                return "\"\" (the host name) or a name of a-z, 0-9, '-' and '_', at most 64 characters"
            case .topic(let allowEmpty):
                return (allowEmpty ? "\"\" (the default) or " : "") + "an MQTT topic without + or #, "
                    + "empty levels or a leading or trailing '/', at most 200 characters"
            case .dailyWindows:
                return IntervalPlan.windowsHelp
            case .triggerInputs:
                return ConfigSchema.triggerInputsAllowed
            }
        }

        private static func short(_ d: Double) -> String {
            d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : "\(d)"
        }
    }

    public struct Key: Sendable {
        public var path: String
        public var kind: Kind
    }

    /// Every key in order (`shutterctl get`'s): the sensor controls' keys
    /// (`camera.exposure.*` ... `camera.hdr`) are `CameraControls.table`'s.
    public static let keys: [Key] = [
        Key(path: "button.stabilityMs", kind: .int(0...500)),
        Key(path: "button.holdMs", kind: .int(100...10000)),
        Key(path: "button.doubleTapMs", kind: .int(0...2000)),
        Key(path: "button.activeLow", kind: .bool),
        Key(path: "shutdown.taps", kind: .int(0...10)),
        Key(path: "shutdown.gapMs", kind: .int(100...2000)),
        Key(path: "shutdown.countdownMs", kind: .int(0...30000)),
        Key(path: "video.width", kind: .int(160...4096, evenOnly: true)),
        Key(path: "video.height", kind: .int(120...4096, evenOnly: true)),
        Key(path: "video.sizes", kind: .sizeList(width: 160...4096, height: 120...4096, evenOnly: true)),
        Key(path: "video.fps", kind: .int(1...120)),
        Key(path: "video.bitrateKbps", kind: .int(100...100000)),
        Key(path: "video.encoder", kind: .choice(ShutterConfig.Video.Encoder.allCases.map(\.rawValue))),
        Key(path: "video.preset", kind: .choice(["ultrafast", "superfast", "veryfast", "faster", "fast",
                                                 "medium", "slow", "slower", "veryslow"])),
        Key(path: "video.keyframeIntervalMs", kind: .int(100...10000)),
        Key(path: "video.maxSeconds", kind: .int(1...3600)),
        Key(path: "video.segmentSeconds", kind: .int(0...3600)),
        Key(path: "video.prerollSeconds", kind: .int(0...30)),
        Key(path: "video.torch", kind: .bool),
        Key(path: "still.width", kind: .int(64...16384)),
        Key(path: "still.height", kind: .int(64...16384)),
        Key(path: "still.sizes", kind: .sizeList(width: 64...16384, height: 64...16384, evenOnly: false)),
        Key(path: "still.quality", kind: .int(1...100)),
        Key(path: "still.moment", kind: .choice(StillMoment.allCases.map(\.rawValue))),
        Key(path: "audio.enabled", kind: .bool),
        Key(path: "audio.device", kind: .string(allowEmpty: false)),
        Key(path: "audio.sampleRate", kind: .intChoice([8000, 16000, 22050, 32000, 44100, 48000])),
        Key(path: "audio.channels", kind: .int(1...2)),
        Key(path: "audio.bitrateKbps", kind: .int(16...512)),
        Key(path: "flash.mode", kind: .choice(ShutterConfig.Flash.Mode.allCases.map(\.rawValue))),
        Key(path: "flash.autoLux", kind: .double(0...100000)),
        Key(path: "camera.index", kind: .int(0...15)),
        Key(path: "camera.model", kind: .string(allowEmpty: true)),
        Key(path: "camera.rotation", kind: .intChoice([0, 180])),
        Key(path: "camera.hflip", kind: .bool),
        Key(path: "camera.vflip", kind: .bool),
        Key(path: "camera.afTimeoutMs", kind: .int(0...5000)),
        Key(path: "camera.stillTimeoutMs", kind: .int(500...60000)),
        // camera.exposure.* ... camera.hdr, the sensor controls: from CameraControls.table.
    ] + CameraControls.configKeys.map { Key(path: $0.path, kind: $0.kind) } + [
        Key(path: "exif.make", kind: .string(allowEmpty: true)),
        Key(path: "exif.model", kind: .string(allowEmpty: true)),
        Key(path: "exif.focalLengthMm", kind: .double(0.1...1000, nullable: true)),
        Key(path: "exif.fNumber", kind: .double(0.5...64, nullable: true)),
        Key(path: "storage.root", kind: .string(allowEmpty: false)),
        Key(path: "storage.lowSpacePolicy",
            kind: .choice(ShutterConfig.Storage.LowSpacePolicy.allCases.map(\.rawValue))),
        Key(path: "storage.minFreeMB", kind: .int(0...1_000_000)),
        Key(path: "storage.requireMountPoint", kind: .bool),
        Key(path: "gpio.chipLabel", kind: .string(allowEmpty: true)),
        Key(path: "gpio.button", kind: .gpioLine(allowEmpty: false)),
        Key(path: "gpio.buttonBias", kind: .choice(ShutterConfig.GPIO.Bias.allCases.map(\.rawValue))),
        Key(path: "gpio.statusLed", kind: .gpioLine(allowEmpty: true)),
        Key(path: "gpio.flashLed", kind: .gpioLine(allowEmpty: true)),
        Key(path: "watchdog.frameTimeoutMs", kind: .int(100...60000)),
        Key(path: "watchdog.maxRestarts", kind: .int(0...100)),
        Key(path: "watchdog.restartBackoffMs", kind: .int(0...600_000)),
        Key(path: "control.socketPath", kind: .string(allowEmpty: false)),
        Key(path: "board.name", kind: .identifier),
        Key(path: "board.description", kind: .string(allowEmpty: true)),
        Key(path: "board.notes", kind: .string(allowEmpty: true)),
        Key(path: "sim.modeSwitchMs", kind: .int(0...10000)),
        Key(path: "sim.sceneLux", kind: .double(0...100000)),
        Key(path: "sim.sceneKelvin", kind: .int(1500...12000)),
        Key(path: "sim.subjectDioptres", kind: .double(0...32)),
        Key(path: "sim.cameras", kind: .simCameras),
        Key(path: "sim.stillStream", kind: .pixelSize(16...16384, nullable: true)),
        Key(path: "web.enabled", kind: .bool),
        Key(path: "web.listen", kind: .listenAddress),
        Key(path: "web.passwordHash", kind: .passwordHash),
        Key(path: "web.tlsCertificate", kind: .string(allowEmpty: true)),
        Key(path: "web.tlsKey", kind: .string(allowEmpty: true)),
        Key(path: "mqtt.enabled", kind: .bool),
        Key(path: "mqtt.url", kind: .brokerURL),
        Key(path: "mqtt.username", kind: .string(allowEmpty: true)),
        Key(path: "mqtt.passwordFile", kind: .string(allowEmpty: true)),
        Key(path: "mqtt.caFile", kind: .string(allowEmpty: true)),
        Key(path: "mqtt.certFile", kind: .string(allowEmpty: true)),
        Key(path: "mqtt.keyFile", kind: .string(allowEmpty: true)),
        Key(path: "mqtt.name", kind: .topicName),
        Key(path: "mqtt.topic", kind: .topic(allowEmpty: true)),
        Key(path: "mqtt.discovery", kind: .bool),
        Key(path: "mqtt.discoveryPrefix", kind: .topic(allowEmpty: false)),
        Key(path: "mqtt.discoveryForm", kind: .choice(ShutterConfig.MQTT.DiscoveryForm.allCases.map(\.rawValue))),
        Key(path: "live.rtsp.enabled", kind: .bool),
        Key(path: "live.rtsp.listen", kind: .listenAddress),
        Key(path: "live.rtsp.open", kind: .bool),
        Key(path: "live.maxViewers", kind: .int(1...16)),
        Key(path: "live.size", kind: .frameSize(width: 160...4096, height: 120...4096)),
        Key(path: "upload.enabled", kind: .bool),
        Key(path: "upload.remote", kind: .string(allowEmpty: true)),
        Key(path: "upload.rcloneConfig", kind: .string(allowEmpty: false)),
        Key(path: "upload.rclone", kind: .string(allowEmpty: false)),
        Key(path: "upload.what", kind: .choice(ShutterConfig.Upload.What.allCases.map(\.rawValue))),
        Key(path: "upload.bandwidth", kind: .string(allowEmpty: true)),
        Key(path: "upload.layout", kind: .choice(ShutterConfig.Upload.Layout.allCases.map(\.rawValue))),
        Key(path: "upload.keepDays", kind: .int(0...3650)),
        Key(path: "upload.alertMinutes", kind: .int(1...10080)),
        Key(path: "webhook.enabled", kind: .bool),
        Key(path: "webhook.url", kind: .string(allowEmpty: true)),
        Key(path: "webhook.events", kind: .choiceList(["photo", "clip"])),
        Key(path: "webhook.attach", kind: .choice(ShutterConfig.Webhook.Attach.allCases.map(\.rawValue))),
        Key(path: "webhook.timeoutSeconds", kind: .int(1...120)),
        Key(path: "webhook.curl", kind: .string(allowEmpty: false)),
        Key(path: "webhook.caFile", kind: .string(allowEmpty: true)),
        Key(path: "interval.enabled", kind: .bool),
        Key(path: "interval.everySeconds", kind: .int(1...86400)),
        Key(path: "interval.windows", kind: .dailyWindows),
        Key(path: "interval.count", kind: .int(0...1_000_000)),
        Key(path: "overlay.enabled", kind: .bool),
        Key(path: "overlay.format", kind: .string(allowEmpty: false)),
        Key(path: "overlay.name", kind: .string(allowEmpty: true)),
        Key(path: "overlay.position", kind: .choice(ShutterConfig.Overlay.Position.allCases.map(\.rawValue))),
        Key(path: "overlay.size", kind: .int(1...20)),
        Key(path: "overlay.font", kind: .string(allowEmpty: false)),
        Key(path: "triggers.inputs", kind: .triggerInputs),
    ]

    public static let byPath: [String: Key] = Dictionary(uniqueKeysWithValues: keys.map { ($0.path, $0) })

    /// Section names ("button", "video", ...).
    public static let sections: Set<String> = Set(keys.map { String($0.path.split(separator: ".")[0]) })

    /// Every object of keys: the sections and the groups inside them ("camera.exposure").
    public static let groups: Set<String> = Set(keys.flatMap { key -> [String] in
        let parts = key.path.split(separator: ".")
        return (1..<parts.count).map { parts[0..<$0].joined(separator: ".") }
    })

    /// A value that failed validation; the loader adds where it came from.
    public struct Violation: Error, Equatable, Sendable {
        public var code: ConfigError.Code
        public var keyPath: String
        public var message: String
    }

    /// Checks one JSON layer (a board or config file, or overrides) and returns
    /// it normalized (GPIO offsets as strings, integers as numbers where a
    /// number belongs). Throws the first violation in key order.
    public static func validate(layer: JSONValue) throws(Violation) -> JSONValue {
        guard case .object(let top) = layer else {
            throw Violation(code: .wrongType, keyPath: "(top level)",
                            message: "the configuration must be a JSON object, not \(layer.typeName)")
        }
        var out = JSONValue.object([:])
        for section in top.keys.sorted() {
            guard sections.contains(section) else {
                throw Violation(code: .unknownKey, keyPath: section,
                                message: "unknown section \"\(section)\"" + suggestion(for: section, among: Array(sections)))
            }
            try validate(group: top[section]!, at: section, into: &out)
        }
        return out
    }

    /// Checks one object of keys (a section, or a group such as `camera.focus`) into `out`.
    private static func validate(group: JSONValue, at path: String, into out: inout JSONValue) throws(Violation) {
        guard case .object(let entries) = group else {
            throw Violation(code: .wrongType, keyPath: path,
                            message: "\"\(path)\" must be an object of keys, not \(group.typeName)")
        }
        for name in entries.keys.sorted() {
            let child = "\(path).\(name)"
            if let key = byPath[child] {
                out.setValue(try check(entries[name]!, for: key), at: child)
            } else if groups.contains(child) {
                try validate(group: entries[name]!, at: child, into: &out)
            } else {
                let here = keys.map(\.path).filter { $0.hasPrefix(path + ".") }
                throw Violation(code: .unknownKey, keyPath: child,
                                message: "unknown key \"\(child)\""
                                    + suggestion(for: child, among: keys.map(\.path) + groups.filter { $0.contains(".") },
                                                 fallback: here))
            }
        }
    }

    /// Validates one value for one key; returns it normalized.
    public static func check(_ value: JSONValue, for key: Key) throws(Violation) -> JSONValue {
        func wrongType() -> Violation {
            Violation(code: .wrongType, keyPath: key.path,
                      message: "\"\(key.path)\" must be \(key.kind.allowed), not \(value.typeName)")
        }
        func bad(_ code: ConfigError.Code, _ shown: String) -> Violation {
            Violation(code: code, keyPath: key.path,
                      message: "\"\(key.path)\" is \(shown); allowed: \(key.kind.allowed)")
        }
        switch (key.kind, value) {
        case (.int(let range, let even), .int(let i)):
            guard range.contains(i), !even || i % 2 == 0 else { throw bad(.outOfRange, String(i)) }
            return value
        case (.intChoice(let choices), .int(let i)):
            guard choices.contains(i) else { throw bad(.notAllowed, String(i)) }
            return value
        case (.double(_, nullable: true), .null):
            return value
        case (.double(let range, _), .int(let i)):
            guard range.contains(Double(i)) else { throw bad(.outOfRange, String(i)) }
            return .double(Double(i))
        case (.double(let range, _), .double(let d)):
            guard range.contains(d) else { throw bad(.outOfRange, "\(d)") }
            return value
        case (.bool, .bool):
            return value
        case (.string(let allowEmpty), .string(let s)):
            guard allowEmpty || !s.isEmpty else { throw bad(.outOfRange, "empty") }
            return value
        case (.choice(let choices), .string(let s)):
            guard choices.contains(s) else {
                throw Violation(code: .notAllowed, keyPath: key.path,
                                message: "\"\(key.path)\" is \"\(s)\"; allowed: \(key.kind.allowed)"
                                    + suggestion(for: s, among: choices))
            }
            return value
        case (.choiceList(let choices), .array(let items)):
            var seen = Set<String>()
            for item in items {
                guard case .string(let s) = item else { throw wrongType() }
                guard choices.contains(s), seen.insert(s).inserted else {
                    throw Violation(code: .notAllowed, keyPath: key.path,
                                    message: "\"\(key.path)\" has \"\(s)\"; allowed: \(key.kind.allowed)"
                                        + suggestion(for: s, among: choices))
                }
            }
            return value
        case (.identifier, .string(let s)):
            let ok = !s.isEmpty && s.count <= 64 && s.unicodeScalars.allSatisfy {
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "_"
            }
            guard ok else { throw bad(.notAllowed, "\"\(s)\"") }
            return value
        case (.gpioLine(let allowEmpty), .string(let s)):
            guard allowEmpty || !s.isEmpty else { throw bad(.outOfRange, "empty") }
            return value
        case (.gpioLine, .int(let i)):
            guard (0...1023).contains(i) else { throw bad(.outOfRange, String(i)) }
            return .string(String(i))
        case (.autoOrDouble(let range), .int), (.autoOrDouble(let range), .double):
            let d = value.number!
            guard d == 0 || range.contains(d) else { throw bad(.outOfRange, value.rendered(pretty: false)) }
            return .double(d)
        case (.numbers(_, _, nullable: true), .null), (.normalisedRect(nullable: true), .null),
             (.pixelSize(_, nullable: true), .null):
            return value
        case (.pixelSize(let range, _), .array(let items)):
            let v = items.compactMap { item -> Int? in
                if case .int(let i) = item { return i }
                if let d = item.number, d == d.rounded(), abs(d) < 1e9 { return Int(d) }
                return nil
            }
            guard v.count == items.count else { throw wrongType() }
            guard v.count == 2, v.allSatisfy({ range.contains($0) && $0 % 2 == 0 }) else {
                throw bad(.outOfRange, value.rendered(pretty: false))
            }
            return .array(v.map(JSONValue.int))
        case (.numbers(let names, let range, _), .array(let items)):
            let numbers = items.compactMap(\.number)
            guard numbers.count == items.count else { throw wrongType() }
            guard numbers.count == names.count, numbers.allSatisfy(range.contains) else {
                throw bad(.outOfRange, value.rendered(pretty: false))
            }
            return .array(numbers.map(JSONValue.double))
        case (.normalisedRect, .array(let items)):
            let v = items.compactMap(\.number)
            guard v.count == items.count else { throw wrongType() }
            // A little slack so 0.1 + 0.9 (binary fractions) still counts as 1.
            let inside = v.count == 4 && v.allSatisfy { (0...1).contains($0) } && v[2] > 0 && v[3] > 0
                && v[0] + v[2] <= 1 + 1e-9 && v[1] + v[3] <= 1 + 1e-9
            guard inside else { throw bad(.outOfRange, value.rendered(pretty: false)) }
            return .array(v.map(JSONValue.double))
        case (.sizeList, .null), (.simCameras, .null):
            return value
        case (.frameSize(let w, let h), .string(let s)):
            guard !s.isEmpty else { return value }
            guard let size = PixelSize(parsing: s) else { throw bad(.wrongType, "\"\(s)\"") }
            guard w.contains(size.width), h.contains(size.height), size.width % 2 == 0, size.height % 2 == 0 else {
                throw bad(.outOfRange, "\"\(s)\"")
            }
            return .string(size.description)
        case (.listenAddress, .string(let s)):
            guard ListenAddress(parsing: s) != nil else { throw bad(.notAllowed, "\"\(s)\"") }
            return value
        case (.passwordHash, .string(let s)):
            // The shape only (ShutterCore links no crypto); the web server checks it with libsodium.
            guard s.isEmpty || (s.hasPrefix("$argon2id$v=19$m=") && s.split(separator: "$").count == 5) else {
                throw bad(.notAllowed, s.hasPrefix("$") ? "not an Argon2id hash" : "not a hash (a plain password is never stored)")
            }
            return value
        case (.brokerURL, .string(let s)):
            guard BrokerURL(parsing: s) != nil else { throw bad(.notAllowed, "\"\(s)\"") }
            return value
        case (.topicName, .string(let s)):
            guard s.count <= 64, s.unicodeScalars.allSatisfy(BrokerURL.isNameScalar) else {
                throw bad(.notAllowed, "\"\(s)\"")
            }
            return value
        case (.topic(let allowEmpty), .string(let s)):
            guard s.isEmpty ? allowEmpty : BrokerURL.isPublishTopic(s) else { throw bad(.notAllowed, "\"\(s)\"") }
            return value
        case (.dailyWindows, .string(let s)):
            do throws(IntervalPlan.WindowsError) {
                // Normalized: spaces gone ("22:00 - 06:00" is "22:00-06:00").
                return .string(try IntervalPlan.windows(s).map(\.description).joined(separator: ","))
            } catch {
                throw bad(.notAllowed, "\"\(s)\": \(error.message)")
            }
        case (.sizeList, .string):
            return try check(.array([value]), for: key)
        case (.sizeList(let w, let h, let even), .array(let items)):
            guard !items.isEmpty else { throw bad(.outOfRange, "an empty list") }
            var sizes: [JSONValue] = []
            for (i, item) in items.enumerated() {
                guard case .string(let text) = item, let size = PixelSize(parsing: text) else {
                    throw Violation(code: .wrongType, keyPath: key.path,
                                    message: "\"\(key.path)\" entry \(i + 1) is \(item.rendered(pretty: false)), not a size "
                                        + "such as \"1920x1080\"; allowed: \(key.kind.allowed)")
                }
                guard w.contains(size.width), h.contains(size.height),
                      !even || (size.width % 2 == 0 && size.height % 2 == 0) else {
                    throw Violation(code: .outOfRange, keyPath: key.path,
                                    message: "\"\(key.path)\" entry \(i + 1) is \"\(text)\"; allowed: \(key.kind.allowed)")
                }
                sizes.append(.string(size.description))
            }
            return .array(sizes)
        case (.triggerInputs, .array(let items)):
            return try checkTriggerInputs(items, key: key)
        case (.simCameras, .array(let items)):
            guard (1...8).contains(items.count) else { throw bad(.outOfRange, "a list of \(items.count)") }
            return .array(try items.enumerated().map { (i, item) throws(Violation) -> JSONValue in
                try checkSimCamera(item, entry: i + 1, key: key)
            })
        default:
            throw wrongType()
        }
    }

    /// One `sim.cameras` entry, normalized to an object.
    private static func checkSimCamera(_ item: JSONValue, entry: Int, key: Key) throws(Violation) -> JSONValue {
        func bad(_ code: ConfigError.Code, _ what: String) -> Violation {
            Violation(code: code, keyPath: key.path,
                      message: "\"\(key.path)\" entry \(entry) \(what); allowed: \(key.kind.allowed)")
        }
        switch item {
        case .string(let model):
            guard !model.isEmpty else { throw bad(.outOfRange, "has an empty model") }
            return .object(["model": item, "broken": .bool(false), "sensorHdr": .bool(false), "startDelayMs": .int(0)])
        case .object(let fields):
            var out: [String: JSONValue] = ["broken": .bool(false), "sensorHdr": .bool(false), "startDelayMs": .int(0)]
            for name in fields.keys.sorted() {
                let v = fields[name]!
                switch (name, v) {
                case ("model", .string(let m)) where !m.isEmpty: out["model"] = v
                case ("broken", .bool), ("sensorHdr", .bool): out[name] = v
                case ("startDelayMs", .int(let ms)):
                    guard (0...30000).contains(ms) else { throw bad(.outOfRange, "has startDelayMs \(ms)") }
                    out[name] = v
                case ("maxSize", .string(let s)):
                    guard let size = PixelSize(parsing: s), size.width > 0, size.height > 0 else {
                        throw bad(.outOfRange, "has maxSize \"\(s)\", not a size such as \"1280x720\"")
                    }
                    out["maxSize"] = .string(size.description)
                case ("model", _), ("broken", _), ("maxSize", _), ("sensorHdr", _), ("startDelayMs", _):
                    throw bad(.wrongType, "has \"\(name)\": \(v.rendered(pretty: false))")
                default:
                    throw bad(.unknownKey, "has an unknown field \"\(name)\""
                                + suggestion(for: name, among: ["model", "broken", "maxSize", "sensorHdr", "startDelayMs"]))
                }
            }
            guard out["model"] != nil else { throw bad(.outOfRange, "has no \"model\"") }
            return .object(out)
        default:
            throw bad(.wrongType, "is \(item.typeName)")
        }
    }

    /// Parses a command-line value ("1500", "true", "libx264") for a key.
    public static func parseOverride(_ text: String, for key: Key) throws(Violation) -> JSONValue {
        let value: JSONValue
        switch key.kind {
        case .int, .intChoice:
            guard let i = Int(text) else {
                throw Violation(code: .wrongType, keyPath: key.path,
                                message: "\"\(key.path)\" must be \(key.kind.allowed), not \"\(text)\"")
            }
            value = .int(i)
        case .double(_, let nullable):
            if nullable && (text == "null" || text.isEmpty) {
                value = .null
            } else if let d = Double(text), d.isFinite {
                value = .double(d)
            } else {
                throw Violation(code: .wrongType, keyPath: key.path,
                                message: "\"\(key.path)\" must be \(key.kind.allowed), not \"\(text)\"")
            }
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "on", "1": value = .bool(true)
            case "false", "no", "off", "0": value = .bool(false)
            default:
                throw Violation(code: .wrongType, keyPath: key.path,
                                message: "\"\(key.path)\" must be true or false, not \"\(text)\"")
            }
        case .autoOrDouble:
            guard let d = Double(text), d.isFinite else {
                throw Violation(code: .wrongType, keyPath: key.path,
                                message: "\"\(key.path)\" must be \(key.kind.allowed), not \"\(text)\"")
            }
            value = .double(d)
        case .numbers(_, _, let nullable), .normalisedRect(let nullable):
            // JSON ("[1.5, 2]", "null") or rpicam-apps' "1.5,2".
            let trimmed = String(text.filter { !$0.isWhitespace })
            if nullable && (trimmed == "null" || trimmed.isEmpty) {
                value = .null
            } else {
                var inner = Substring(trimmed)
                if inner.hasPrefix("[") && inner.hasSuffix("]") { inner = inner.dropFirst().dropLast() }
                let parts = inner.split(separator: ",", omittingEmptySubsequences: false)
                    .map { Double($0) }
                guard !parts.isEmpty, parts.allSatisfy({ $0?.isFinite == true }) else {
                    throw Violation(code: .wrongType, keyPath: key.path,
                                    message: "\"\(key.path)\" must be \(key.kind.allowed), not \"\(text)\"")
                }
                value = .array(parts.map { .double($0!) })
            }
        case .pixelSize(_, let nullable):
            // JSON ("[1920, 1080]", "null") or "1920x1080".
            let trimmed = String(text.filter { !$0.isWhitespace }).lowercased()
            if nullable && (trimmed == "null" || trimmed.isEmpty) {
                value = .null
            } else {
                var inner = Substring(trimmed)
                if inner.hasPrefix("[") && inner.hasSuffix("]") { inner = inner.dropFirst().dropLast() }
                let parts = inner.split(whereSeparator: { $0 == "," || $0 == "x" }).map { Int($0) }
                guard parts.count == 2, let w = parts[0], let h = parts[1] else {
                    throw Violation(code: .wrongType, keyPath: key.path,
                                    message: "\"\(key.path)\" must be \(key.kind.allowed) (or WIDTHxHEIGHT), not \"\(text)\"")
                }
                value = .array([.int(w), .int(h)])
            }
        case .string, .choice, .identifier, .gpioLine, .frameSize, .listenAddress, .passwordHash, .brokerURL, .topicName, .topic,
             .dailyWindows:
            value = .string(text)
        case .sizeList, .choiceList:
            // JSON, or "1920x1080,1280x720" ("photo,clip") as a shell user would type it.
            if let parsed = try? JSONParser.parse(text).value {
                value = parsed
            } else {
                value = .array(text.split(separator: ",").map { .string($0.trimmedSpaces) })
            }
        case .triggerInputs:
            // JSON only: an input has too many fields for a shorthand.
            value = (try? JSONParser.parse(text).value) ?? .string(text)
        case .simCameras:
            // JSON, or "imx708,imx219" (models only).
            if let parsed = try? JSONParser.parse(text).value {
                value = parsed
            } else {
                value = .array(text.split(separator: ",").map { .string($0.trimmedSpaces) })
            }
        }
        return try check(value, for: key)
    }

    /// Rules between keys, checked on the merged configuration. Returns the
    /// offending key path and message, if any.
    public static func crossCheck(_ config: ShutterConfig) -> Violation? {
        if config.web.tlsCertificate.isEmpty != config.web.tlsKey.isEmpty {
            let missing = config.web.tlsKey.isEmpty ? "web.tlsKey" : "web.tlsCertificate"
            return Violation(code: .outOfRange, keyPath: missing,
                             message: "\"\(missing)\" is empty; HTTPS needs both web.tlsCertificate and web.tlsKey (or neither for plain HTTP)")
        }
        if config.mqtt.certFile.isEmpty != config.mqtt.keyFile.isEmpty {
            let missing = config.mqtt.keyFile.isEmpty ? "mqtt.keyFile" : "mqtt.certFile"
            return Violation(code: .outOfRange, keyPath: missing,
                             message: "\"\(missing)\" is empty; a TLS client certificate needs both mqtt.certFile and mqtt.keyFile (or neither)")
        }
        let tlsFiles = [("mqtt.caFile", config.mqtt.caFile), ("mqtt.certFile", config.mqtt.certFile)]
        if let url = BrokerURL(parsing: config.mqtt.url), !url.tls, let key = tlsFiles.first(where: { !$0.1.isEmpty })?.0 {
            return Violation(code: .outOfRange, keyPath: key,
                             message: "\"\(key)\" is set but mqtt.url is \"\(config.mqtt.url)\" (plain MQTT); TLS needs an mqtts:// URL")
        }
        if config.upload.enabled {
            let remote = config.upload.remote
            if !remote.contains(":") || remote.hasPrefix(":") {
                return Violation(code: .outOfRange, keyPath: "upload.remote",
                                 message: "\"upload.remote\" is \"\(remote)\"; uploads need an rclone remote and path, "
                                    + "\"NAME:PATH\" (\"nas:camera/garden\"), NAME a section of upload.rcloneConfig")
            }
        }
        if config.webhook.enabled, !(config.webhook.url.hasPrefix("http://") || config.webhook.url.hasPrefix("https://")) {
            return Violation(code: .outOfRange, keyPath: "webhook.url",
                             message: "\"webhook.url\" is \"\(config.webhook.url)\"; the webhook needs an http:// or https:// URL")
        }
        if config.interval.enabled, !config.interval.windows.isEmpty,
           IntervalPlan(config: config.interval).nextSlot(after: 0) == nil {
            // Slots are multiples of everySeconds in local time: a window may fall between two.
            return Violation(code: .outOfRange, keyPath: "interval.windows",
                             message: "\"interval.windows\" is \"\(config.interval.windows)\", which holds no slot of "
                                + "interval.everySeconds (\(config.interval.everySeconds): slots are its multiples in local "
                                + "time, 3600 on the hour); widen a window or take a shorter interval.everySeconds")
        }
        if let why = OverlayFormat.problem(config.overlay.format) {
            return Violation(code: .outOfRange, keyPath: "overlay.format",
                             message: "\"overlay.format\" is \"\(config.overlay.format)\"; \(why)")
        }
        if let v = crossCheckTriggers(config) { return v }
        if config.video.segmentSeconds > config.video.maxSeconds {
            return Violation(code: .outOfRange, keyPath: "video.segmentSeconds",
                             message: "\"video.segmentSeconds\" is \(config.video.segmentSeconds); allowed: "
                                + "0 (off) or at most video.maxSeconds (\(config.video.maxSeconds))")
        }
        return nil
    }

    /// " (did you mean "x"?)" for the closest candidate within a small edit
    /// distance, else a list of `fallback` choices, else "".
    public static func suggestion(for word: String, among candidates: [String], fallback: [String] = []) -> String {
        let lower = word.lowercased()
        let scored = candidates.map { ($0, editDistance(lower, $0.lowercased())) }
        let limit = max(2, word.count / 3)
        if let best = scored.filter({ $0.1 <= limit }).min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }) {
            return " (did you mean \"\(best.0)\"?)"
        }
        if !fallback.isEmpty { return "; known keys here: " + fallback.joined(separator: ", ") }
        return ""
    }

    /// Levenshtein distance over Unicode scalars.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        var cur = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&prev, &cur)
        }
        return prev[b.count]
    }
}
