// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The entities for settings and actions the service already has, each acting through the
/// command topic with the control socket's words (as `shutterctl` sends them), each showing
/// what the camera's status says is in force; and the diagnostics (`entity_category:
/// diagnostic`) from the status message. Keys as Home Assistant 2024.3's MQTT schema has
/// them (an unknown key invalidates a whole config there).
extension MQTTDiscovery {
    static func controls(_ s: MQTTSettings) -> [Config] {
        func entity(_ c: String, _ o: String, _ n: String, _ f: JSONObject) -> Config { Self.entity(s, c, o, n, f) }
        let command: JSONObject = ["command_topic": .string(s.command), "qos": .int(1), "retain": .bool(false)]
        let (low, high) = Self.evRange
        return [
            // `set video.torch true|false`: the LED lit while a clip records.
            entity("switch", "torch", "Torch", command.merging([
                "payload_on": .string("set video.torch true"), "payload_off": .string("set video.torch false"),
                "state_topic": .string(s.status),
                "value_template": .string("{{ ('ON' if value_json.torch else 'OFF') if value_json.torch is defined else None }}"),
                "state_on": .string("ON"), "state_off": .string("OFF"),
                "icon": .string("mdi:flashlight"), "entity_category": .string("config"),
            ]) { _, new in new }),
            // `set camera.exposure.ev N`: exposure compensation in stops.
            entity("number", "exposure_ev", "Exposure compensation", command.merging([
                "command_template": .string("set camera.exposure.ev {{ value }}"),
                "state_topic": .string(s.status),
                "value_template": .string("{{ value_json.exposureEv if value_json.exposureEv is defined else None }}"),
                "min": .double(low), "max": .double(high), "step": .double(0.5), "mode": .string("slider"),
                "unit_of_measurement": .string("EV"), "icon": .string("mdi:plus-minus-variant"),
                "entity_category": .string("config"),
            ]) { _, new in new }),
            // `set video.sizes WxH`: the camera restarts at that size; shown is the size it granted
            // (unknown when that is none of the options).
            entity("select", "video_size", "Video size", command.merging([
                "command_template": .string("set video.sizes {{ value }}"),
                "state_topic": .string(s.status),
                "value_template": .string("{{ value_json.videoSize if value_json.videoSize is defined and value_json.videoSize in "
                                          + "[" + s.videoSizes.map { "'\($0)'" }.joined(separator: ", ") + "] else None }}"),
                "options": .array(s.videoSizes.map(JSONValue.string)),
                "icon": .string("mdi:video-box"), "entity_category": .string("config"),
            ]) { _, new in new }),
            // `focus 0.5 0.5`: the window at the centre, and an autofocus cycle where the lens
            // has one in auto mode (as shutterctl focus does).
            entity("button", "focus", "Focus", command.merging([
                "payload_press": .string("focus 0.5 0.5"), "icon": .string("mdi:image-filter-center-focus"),
            ]) { _, new in new }),
        ]
    }

    /// `camera.exposure.ev`'s range, from the schema (the command is checked against it).
    static var evRange: (Double, Double) {
        if case .double(let r, _)? = ConfigSchema.byPath["camera.exposure.ev"]?.kind { return (r.lowerBound, r.upperBound) }
        return (-8, 8)
    }

    static func diagnostics(_ s: MQTTSettings) -> [Config] {
        func entity(_ c: String, _ o: String, _ n: String, _ f: JSONObject) -> Config { Self.entity(s, c, o, n, f) }
        let diagnostic: JSONObject = ["state_topic": .string(s.status), "entity_category": .string("diagnostic")]
        var out = [
            entity("sensor", "uptime", "Uptime", diagnostic.merging([
                "value_template": .string("{{ value_json.uptimeSeconds if value_json.uptimeSeconds is defined else None }}"),
                "device_class": .string("duration"), "unit_of_measurement": .string("s"),
            ]) { _, new in new }),
            // A state is at most 255 characters in Home Assistant: the whole line is the attribute.
            entity("sensor", "last_error", "Last error", diagnostic.merging([
                "value_template": .string("{{ (value_json.lastError if value_json.lastError is defined else 'none')[:255] }}"),
                "json_attributes_topic": .string(s.status),
                "json_attributes_template": .string("{{ {'message': value_json.lastError} | tojson "
                                                    + "if value_json.lastError is defined else '{}' }}"),
                "icon": .string("mdi:alert-circle-outline"),
            ]) { _, new in new }),
        ]
        if s.health.temperaturePath != nil {
            out.append(entity("sensor", "cpu_temperature", "CPU temperature", diagnostic.merging([
                "value_template": .string("{{ value_json.cpuTemperature if value_json.cpuTemperature is defined else None }}"),
                "device_class": .string("temperature"), "unit_of_measurement": .string("°C"),
                "state_class": .string("measurement"), "suggested_display_precision": .int(1),
            ]) { _, new in new }))
        }
        if s.health.throttledPath != nil {
            // The firmware's flags (vcgencmd get_throttled): a problem while under-voltage,
            // frequency capping, throttling or the soft temperature limit holds; every flag,
            // now and since boot, as attributes.
            out.append(entity("binary_sensor", "throttled", "Power or temperature problem", diagnostic.merging([
                "value_template": .string("{{ ('ON' if value_json.throttled.problem else 'OFF') "
                                          + "if value_json.throttled is defined else None }}"),
                "payload_on": .string("ON"), "payload_off": .string("OFF"), "device_class": .string("problem"),
                "json_attributes_topic": .string(s.status),
                "json_attributes_template": .string("{{ (value_json.throttled if value_json.throttled is defined "
                                                    + "else {}) | tojson }}"),
            ]) { _, new in new }))
        }
        return out
    }
}
