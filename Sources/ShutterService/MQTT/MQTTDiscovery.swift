// SPDX-License-Identifier: BSD-2-Clause
import ShutterBuild
import ShutterCore

/// Home Assistant's MQTT discovery: one retained config message per entity under
/// `<discoveryPrefix>/<component>/<name>/<object>/config`, every one naming the same
/// device block, so Home Assistant shows one device with its entities (keys as
/// home-assistant.io/integrations/<component>.mqtt documents them). An empty retained
/// message on the same topics removes them (`forget`).
enum MQTTDiscovery {
    struct Config {
        var component: String
        var object: String
        var json: JSONObject
    }

    /// The device form (`mqtt.discoveryForm` "device", Home Assistant 2024.11 and later): the
    /// same configs as one retained message on `<prefix>/device/<name>/config`, the device and
    /// origin once, each entity under `components` by its object id with its `platform` (Home
    /// Assistant names it `<name> <object>`, as the entity form's topic does, so an entity
    /// keeps its id from one form to the other). Availability stays in each entity (a shared one
    /// would reach the device triggers too, whose schema has no such key).
    static func deviceConfig(_ s: MQTTSettings) -> JSONObject {
        var components: JSONObject = [:]
        for c in configs(s) {
            var o = c.json
            o["device"] = nil
            o["origin"] = nil
            o["platform"] = .string(c.component)
            components[c.object] = .object(o)
        }
        return ["device": .object(device(s)), "origin": .object(origin), "components": .object(components)]
    }

    /// What Home Assistant's log names as the source of the configs.
    static let origin: JSONObject = ["name": .string("Shutter"), "sw_version": .string(ShutterVersion.string)]

    /// Sent first to a config topic of the form being left (retained, replacing the config
    /// there): Home Assistant then unloads those entities without deleting them, and the other
    /// form's configs take them over (home-assistant.io/integrations/mqtt, "Migration from
    /// single component to device-based discovery", and back).
    static let migrationMarker: JSONObject = ["migrate_discovery": .bool(true)]

    /// One entity's config: its name, ids, the device, the origin and the availability, then `fields`.
    static func entity(_ s: MQTTSettings, _ component: String, _ object: String, _ name: String,
                       _ fields: JSONObject) -> Config {
        var o: JSONObject = [
            "name": .string(name),
            "unique_id": .string("shutter_\(s.name)_\(object)"),
            "device": .object(device(s)),
            "origin": .object(origin),
            "availability_topic": .string(s.availability),
            "payload_available": .string("online"),
            "payload_not_available": .string("offline"),
        ]
        o.merge(fields) { _, new in new }
        return Config(component: component, object: object, json: o)
    }

    /// The device block every entity names: one `identifiers` value ties them together.
    static func device(_ s: MQTTSettings) -> JSONObject {
        var d: JSONObject = [
            "identifiers": .array([.string("shutter_\(s.name)")]),
            "name": .string("Shutter \(s.name)"),
            "manufacturer": .string("Shutter"),
            // The product, not the board: the board's long description is its hardware.
            "model": .string("Shutter camera"),
            "hw_version": .string(s.board),
            "sw_version": .string(ShutterVersion.string),
        ]
        if let url = s.webURL { d["configuration_url"] = .string(url + "/") }
        return d
    }

    /// Every entity: a button "Take photo", a switch and a binary sensor "Recording",
    /// sensors "State" and "Free space", an image "Last photo", an event entity for the
    /// files, and device triggers for the button's tap and hold; with RTSP on, a sensor
    /// "Live stream" whose state is the stream's URL (a viewer adds its token); with uploads
    /// on, a sensor "Uploads waiting" (the queue, its report as attributes) and a problem
    /// binary sensor "Uploads failing" (nothing has worked for upload.alertMinutes).
    static func configs(_ s: MQTTSettings) -> [Config] {
        let recordingTemplate = "{{ 'ON' if value_json.state == 'recording' else 'OFF' }}"
        func entity(_ component: String, _ object: String, _ name: String, _ fields: JSONObject) -> Config {
            Self.entity(s, component, object, name, fields)
        }
        func trigger(_ object: String, type: String, payload: String) -> Config {
            Config(component: "device_automation", object: object, json: [
                "automation_type": .string("trigger"),
                "topic": .string(s.button),
                "type": .string(type),
                "subtype": .string("button_1"),
                "payload": .string(payload),
                "qos": .int(1),
                "device": .object(device(s)),
            ])
        }
        let stream = s.rtspURL.map { url in
            entity("sensor", "live_stream", "Live stream", [
                "state_topic": .string(s.availability), "value_template": .string(url),
                "entity_category": .string("diagnostic"), "icon": .string("mdi:cctv"),
            ])
        }
        let uploads = s.uploads ? [
            entity("sensor", "uploads_waiting", "Uploads waiting", [
                "state_topic": .string(s.status),
                "value_template": .string("{{ value_json.upload.waitingFiles if value_json.upload is defined else None }}"),
                "json_attributes_topic": .string(s.status),
                "json_attributes_template": .string("{{ (value_json.upload if value_json.upload is defined else {}) | tojson }}"),
                "unit_of_measurement": .string("files"), "state_class": .string("measurement"),
                "icon": .string("mdi:cloud-upload"),
            ]),
            entity("binary_sensor", "uploads_failing", "Uploads failing", [
                "state_topic": .string(s.status),
                "value_template": .string("{{ 'ON' if value_json.upload is defined and value_json.upload.failing else 'OFF' }}"),
                "payload_on": .string("ON"), "payload_off": .string("OFF"), "device_class": .string("problem"),
            ]),
        ] : []
        return [
            entity("button", "take_photo", "Take photo", [
                "command_topic": .string(s.command), "payload_press": .string("photo"), "qos": .int(1),
                "retain": .bool(false), "icon": .string("mdi:camera"),
            ]),
            entity("switch", "recording", "Recording", [
                "command_topic": .string(s.command), "payload_on": .string("record start"),
                "payload_off": .string("record stop"), "state_topic": .string(s.state),
                "value_template": .string(recordingTemplate), "state_on": .string("ON"), "state_off": .string("OFF"),
                "qos": .int(1), "retain": .bool(false), "icon": .string("mdi:record-rec"),
            ]),
            // Named apart from the switch (two entities "Recording" were one name twice in
            // Home Assistant); the id stays, so its history does.
            entity("binary_sensor", "recording_sensor", "Recording in progress", [
                "state_topic": .string(s.state), "value_template": .string(recordingTemplate),
                "payload_on": .string("ON"), "payload_off": .string("OFF"),
            ]),
            entity("sensor", "state", "State", [
                "state_topic": .string(s.state), "value_template": .string("{{ value_json.state }}"),
                "json_attributes_topic": .string(s.state), "icon": .string("mdi:camera-iris"),
            ]),
            entity("sensor", "free_space", "Free space", [
                // The status sent before the card is checked has no freeBytes: "None" is Home
                // Assistant's unknown, without its template warning (found by make ha-test).
                "state_topic": .string(s.status),
                // In GB to two places (Home Assistant 2024.3's MQTT sensor has no suggested unit:
                // bytes showed as a 12-digit number).
                "value_template": .string("{{ (value_json.freeBytes / 1000000000) | round(2) "
                                          + "if value_json.freeBytes is defined else None }}"),
                "unit_of_measurement": .string("GB"), "device_class": .string("data_size"),
                "state_class": .string("measurement"), "entity_category": .string("diagnostic"),
            ]),
            entity("select", "flash_mode", "Flash", [
                "command_topic": .string(s.command), "command_template": .string("set flash.mode {{ value }}"),
                "state_topic": .string(s.status),
                "value_template": .string("{{ value_json.flashMode if value_json.flashMode is defined else None }}"),
                "options": .array(ShutterConfig.Flash.Mode.allCases.map { .string($0.rawValue) }),
                "qos": .int(1), "retain": .bool(false), "icon": .string("mdi:flash"), "entity_category": .string("config"),
            ]),
            entity("button", "next_camera", "Next camera", [
                "command_topic": .string(s.command), "payload_press": .string("camera next"), "qos": .int(1),
                "retain": .bool(false), "icon": .string("mdi:camera-switch"), "entity_category": .string("config"),
            ]),
            entity("image", "last_photo", "Last photo", [
                "image_topic": .string(s.thumbnail), "content_type": .string("image/jpeg"),
            ]),
            entity("event", "capture", "Capture", [
                "state_topic": .string(s.event), "event_types": .array(["photo", "clip", "deleted"].map(JSONValue.string)),
            ]),
            // Every gesture of the button as an event entity (the button topic's plain words as
            // Home Assistant's event JSON), and a device trigger for each of the four.
            entity("event", "button", "Button", [
                "state_topic": .string(s.button), "device_class": .string("button"),
                "value_template": .string("{\"event_type\": \"{{ value }}\"}"),
                "event_types": .array(["tap", "double-tap", "hold-start", "hold-end", "shutdown-countdown", "shutdown"]
                    .map(JSONValue.string)),
            ]),
            trigger("tap", type: "button_short_press", payload: "tap"),
            trigger("double_tap", type: "button_double_press", payload: "double-tap"),
            trigger("hold", type: "button_long_press", payload: "hold-start"),
            trigger("hold_end", type: "button_long_release", payload: "hold-end"),
        ] + controls(s) + diagnostics(s) + (stream.map { [$0] } ?? []) + uploads
    }
}
