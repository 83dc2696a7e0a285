// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// The `mqtt` section resolved for a run: the camera's name and topics (defaults filled
/// in from the host name), the broker and the password read from its file. The one
/// place the topic layout is written down.
struct MQTTSettings: Sendable {
    let broker: BrokerURL
    /// The camera's id in topics and in Home Assistant ([a-z0-9_-]).
    let name: String
    /// Everything is published under it ("shutter/<name>" by default).
    let topic: String
    let discovery: Bool
    let discoveryPrefix: String
    /// One config for the device (Home Assistant 2024.11+) or one per entity.
    let discoveryForm: ShutterConfig.MQTT.DiscoveryForm
    let username: String?
    let password: String?
    let caFile: String?
    let certFile: String?
    let keyFile: String?
    /// The web page's address when it is on ("http://host:8080"): Home Assistant's
    /// configuration_url and the events' file URLs.
    let webURL: String?
    /// The live RTSP stream's address when it is on ("rtsp://host:8554/live"), without a
    /// password: Home Assistant's "Live stream" sensor.
    let rtspURL: String?
    let board: String
    /// Uploads are on: the queue's sensor and problem sensor are discovered.
    let uploads: Bool
    /// The CPU temperature and the firmware's throttled flags, where the board shows them.
    let health: BoardHealth
    /// The Video size select's options: the configuration's video sizes and the usual 16:9
    /// ones no larger than its largest, largest first.
    let videoSizes: [String]

    /// What the configuration cannot say until the service runs (the password file's
    /// contents, the host name) — a file that cannot be read is the error returned.
    init(config: ShutterConfig, board: String, hostName: String = ProcessInfo.processInfo.hostName) throws(MQTTSettingsError) {
        uploads = config.upload.enabled
        health = BoardHealth()
        videoSizes = Self.videoSizeOptions(asked: config.videoSizes)
        let m = config.mqtt
        broker = BrokerURL(parsing: m.url)!  // validated with the configuration
        name = m.name.isEmpty ? BrokerURL.topicName(from: hostName.split(separator: ".").first.map(String.init) ?? "") : m.name
        topic = m.topic.isEmpty ? "shutter/\(name)" : m.topic
        discovery = m.discovery
        discoveryPrefix = m.discoveryPrefix
        discoveryForm = m.discoveryForm
        username = m.username.isEmpty ? nil : m.username
        if m.passwordFile.isEmpty {
            password = nil
        } else {
            guard let text = try? String(contentsOfFile: m.passwordFile, encoding: .utf8) else {
                throw MQTTSettingsError(message: "cannot read mqtt.passwordFile \(m.passwordFile) (it must be readable by the service)")
            }
            password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        caFile = m.caFile.isEmpty ? nil : m.caFile
        certFile = m.certFile.isEmpty ? nil : m.certFile
        keyFile = m.keyFile.isEmpty ? nil : m.keyFile
        self.board = board
        // The page starts only with a password (web.passwordHash): no link to one that is not there.
        if config.web.enabled, !config.web.passwordHash.isEmpty, let listen = ListenAddress(parsing: config.web.listen) {
            let scheme = config.web.tlsCertificate.isEmpty ? "http" : "https"
            let wildcard = listen.host == "0.0.0.0" || listen.host == "::"
            let host = wildcard ? hostName : (listen.host.contains(":") ? "[\(listen.host)]" : listen.host)
            webURL = "\(scheme)://\(host):\(listen.port)"
        } else {
            webURL = nil
        }
        if config.live.rtsp.enabled, let listen = ListenAddress(parsing: config.live.rtsp.listen) {
            let wildcard = listen.host == "0.0.0.0" || listen.host == "::"
            let host = wildcard ? hostName : (listen.host.contains(":") ? "[\(listen.host)]" : listen.host)
            rtspURL = "rtsp://\(host):\(listen.port)/live"
        } else {
            rtspURL = nil
        }
    }

    static func videoSizeOptions(asked: [PixelSize]) -> [String] {
        let usual = [(3840, 2160), (2560, 1440), (1920, 1080), (1280, 720), (960, 540), (640, 360)].map {
            PixelSize(width: $0.0, height: $0.1)
        }
        guard let largest = asked.max(by: { $0.width * $0.height < $1.width * $1.height }) else { return [] }
        var out: [PixelSize] = []
        for size in asked + usual.filter({ $0.fits(in: largest) }) where !out.contains(size) { out.append(size) }
        return out.sorted { $0.width * $0.height > $1.width * $1.height }.map(\.description)
    }

    // MARK: Topics

    var availability: String { "\(topic)/availability" }
    var state: String { "\(topic)/state" }
    var event: String { "\(topic)/event" }
    /// The physical button's gestures, one word each (Home Assistant's device triggers).
    var button: String { "\(topic)/button" }
    var status: String { "\(topic)/status" }
    var thumbnail: String { "\(topic)/thumbnail" }
    var command: String { "\(topic)/command" }
    /// Home Assistant's birth message: "online" when it (or its MQTT integration) starts.
    var haStatus: String { "\(discoveryPrefix)/status" }

    /// `<prefix>/<component>/<name>/<object>/config`: one entity's config (the entity form).
    func discoveryTopic(component: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(name)/\(object)/config"
    }

    /// `<prefix>/device/<name>/config`: the whole camera's config (the device form). Home
    /// Assistant names each component `<name> <object>`, as the entity form's topics do, so
    /// an entity keeps its id (and history) from one form to the other.
    var deviceDiscoveryTopic: String { "\(discoveryPrefix)/device/\(name)/config" }

    /// Where the other form's configs of this camera would be (retained): what a switch of
    /// form hands over (MQTTDiscoveryHandover).
    var otherFormFilter: String {
        switch discoveryForm {
        case .device: "\(discoveryPrefix)/+/\(name)/+/config"
        case .entity: deviceDiscoveryTopic
        }
    }

    /// A topic `otherFormFilter` matches (and no other of the camera's: a discovery prefix
    /// may be a prefix of the camera's topic, "shutter" beside "shutter/garden").
    func isOtherFormConfig(_ t: String) -> Bool {
        guard t.hasPrefix(discoveryPrefix + "/") else { return false }
        let levels = t.dropFirst(discoveryPrefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        switch discoveryForm {
        case .device: return levels.count == 4 && levels[1] == name && levels[3] == "config" && levels[0] != "device"
        case .entity: return t == deviceDiscoveryTopic
        }
    }

    /// Comes back to the camera itself once the broker has delivered the retained messages
    /// of the subscriptions made before it (the broker handles a connection's packets in order).
    var discoveryProbe: String { "\(topic)/discovery-check" }

    /// Where a command's reply may go (its MQTT 5 response topic): any topic a client may
    /// publish to, but not the camera's own (its tree, except `<topic>/reply/…`, which is
    /// for replies) nor the discovery prefix: a reply on `<topic>/availability` would read
    /// as "not online", one under the prefix as an entity's config.
    func mayReply(to t: String) -> Bool {
        guard BrokerURL.isPublishTopic(t) else { return false }
        if t == topic || t.hasPrefix(topic + "/") { return t.hasPrefix(topic + "/reply/") }
        return t != discoveryPrefix && !t.hasPrefix(discoveryPrefix + "/")
    }
}

struct MQTTSettingsError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
