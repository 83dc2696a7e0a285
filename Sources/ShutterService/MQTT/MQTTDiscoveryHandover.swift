// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// The discovery configs sent at each connection, in the form `mqtt.discoveryForm` names,
/// handing over from the other form when the broker still keeps its configs of this camera
/// (a camera that published per-entity configs before, or one switched back). Home
/// Assistant's documented order: `{"migrate_discovery": true}` on each old topic, then the
/// new configs, then the old topics cleared. Only configs that are there are migrated: a
/// marker on a topic Home Assistant no longer reads is logged there as a conflict.
///
/// How it knows what is there: at the connection the session subscribes to the other form's
/// topics and to `discoveryProbe`, then publishes the probe; the broker delivers the retained
/// messages of the earlier subscription before the probe comes back (it handles a
/// connection's packets in order), so the probe closes the list.
struct MQTTDiscoveryHandover {
    /// The other form's retained configs met since `begin`; nil when no check is under way.
    private(set) var found: [String]?

    mutating func begin() { found = [] }

    /// A message on the other form's topics: kept when it is a config (not empty, not a marker).
    mutating func met(topic: String, payload: Data) {
        guard found != nil, !payload.isEmpty, !Self.isMarker(payload), !(found?.contains(topic) ?? true) else { return }
        found?.append(topic)
    }

    /// The probe came back (or the wait for it ended): what to hand over; the check is over.
    mutating func finish() -> [String]? {
        defer { found = nil }
        return found
    }

    static func isMarker(_ payload: Data) -> Bool {
        guard let v = try? JSONParser.parse(String(decoding: payload, as: UTF8.self)).value, case .object(let o) = v else {
            return false
        }
        return o["migrate_discovery"] == .bool(true) || o["migr_discvry"] == .bool(true)
    }

    /// The messages to publish, in order, all retained: the marker on each old topic, this
    /// form's configs, each old topic cleared.
    static func messages(_ s: MQTTSettings, handingOver old: [String]) -> [(topic: String, payload: Data)] {
        let marker = MQTTMessages.data(MQTTDiscovery.migrationMarker)
        return old.map { ($0, marker) } + configs(s) + old.map { ($0, Data()) }
    }

    /// This form's configs, as published.
    static func configs(_ s: MQTTSettings) -> [(topic: String, payload: Data)] {
        switch s.discoveryForm {
        case .device:
            return [(s.deviceDiscoveryTopic, MQTTMessages.data(MQTTDiscovery.deviceConfig(s)))]
        case .entity:
            return MQTTDiscovery.configs(s).map {
                (s.discoveryTopic(component: $0.component, object: $0.object), MQTTMessages.data($0.json))
            }
        }
    }

    /// The topics `forget` (and `mqtt.discovery` false) clear: this form's.
    static func topics(_ s: MQTTSettings) -> [String] { configs(s).map(\.topic) }
}
