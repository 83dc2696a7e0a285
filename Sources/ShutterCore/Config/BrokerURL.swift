// SPDX-License-Identifier: BSD-2-Clause
/// An MQTT broker as `mqtt.url` names it: "mqtt://HOST[:PORT]" (plain, 1883) or
/// "mqtts://HOST[:PORT]" (TLS, 8883). HOST is a DNS name, an IPv4 address or a
/// bracketed IPv6 one; no user, path or query (the credentials have keys of their own,
/// so a password never sits in the configuration).
/// Also the rules for the names and topics the MQTT keys hold, so that the
/// configuration's check and the client agree on them.
public struct BrokerURL: Equatable, Sendable, CustomStringConvertible {
    public var tls: Bool
    public var host: String
    public var port: Int

    public init?(parsing text: String) {
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        var hostPart = rest, portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            hostPart = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard !hostPart.isEmpty, hostPart.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            if let colon = rest.lastIndex(of: ":") {
                hostPart = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            }
            guard !hostPart.isEmpty, hostPart.count <= 253, hostPart.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".")
            }) else { return nil }
        }
        if let p = portText {
            guard !p.isEmpty, p.count <= 5, p.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(p),
                  (1...65535).contains(n) else { return nil }
            port = n
        } else {
            port = tls ? 8883 : 1883
        }
        host = String(hostPart)
    }

    public var description: String {
        "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// a-z, 0-9, '-' and '_': safe in a topic level and in Home Assistant's ids.
    public static func isNameScalar(_ u: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(u) || ("0"..."9").contains(u) || u == "-" || u == "_"
    }

    /// `name` made into a topic name: lower-cased, anything else "-" (a host name
    /// "Pi-Kitchen.local" is "pi-kitchen-local"); "shutter" when nothing is left.
    public static func topicName(from name: String) -> String {
        let mapped = String(String.UnicodeScalarView(name.lowercased().unicodeScalars.map { isNameScalar($0) ? $0 : "-" }))
        return mapped.isEmpty ? "shutter" : String(mapped.prefix(64))
    }

    /// A topic to publish under: no wildcards, no control characters, no empty level,
    /// no leading "$" (broker topics), at most 200 characters.
    public static func isPublishTopic(_ t: String) -> Bool {
        guard !t.isEmpty, t.count <= 200, !t.hasPrefix("$") else { return false }
        guard t.unicodeScalars.allSatisfy({ $0 != "+" && $0 != "#" && $0.value >= 0x20 && $0.value != 0x7F }) else { return false }
        return !t.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty }
    }
}
