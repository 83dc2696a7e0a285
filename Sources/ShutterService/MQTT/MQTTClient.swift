// SPDX-License-Identifier: BSD-2-Clause
import CMosquitto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import Synchronization

/// One libmosquitto client (MQTT 5) with its own network thread (`mosquitto_loop_start`):
/// connecting, keep-alive, reconnecting with backoff and writing happen there, so no
/// caller ever waits on the network. `publish` only queues a packet for that thread.
/// Everything libmosquitto reports comes back through `events` (MQTTCallbacks.swift).
// Unchecked: wraps a libmosquitto handle; its calls lock the client's own state (threaded mode).
final class MQTTClient: @unchecked Sendable {
    struct Options {
        var clientID: String
        var broker: BrokerURL
        var username: String?
        var password: String?
        var caFile: String?
        var certFile: String?
        var keyFile: String?
        var keepAliveSeconds: Int32
        /// The Last Will: published by the broker when the connection dies without a DISCONNECT.
        var will: (topic: String, payload: String)
        /// Reconnect backoff: from `min` doubling up to `max` seconds.
        var reconnectDelay: (min: UInt32, max: UInt32)
    }

    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call): \(MQTTClient.describe(code))" }
    }

    private let handle: OpaquePointer
    private let callbacks: MQTTCallbackBox
    private let stopped = Mutex(false)

    private static let libraryOnce: Void = { mosquitto_lib_init(); return () }()

    /// Sets the client up; `connect` connects.
    init(_ o: Options, events: @escaping @Sendable (MQTTClientEvent) -> Void) throws(Failure) {
        _ = Self.libraryOnce
        callbacks = MQTTCallbackBox(deliver: events)
        guard let h = mosquitto_new(o.clientID, true, Unmanaged.passUnretained(callbacks).toOpaque()) else {
            throw Failure(call: "mosquitto_new", code: MOSQ_ERR_NOMEM.rawValue)
        }
        handle = h
        func check(_ call: String, _ rc: Int32) throws(Failure) {
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                mosquitto_destroy(h)
                throw Failure(call: call, code: rc)
            }
        }
        try check("protocol version", mosquitto_int_option(h, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5))
        if let user = o.username {
            try check("mosquitto_username_pw_set", mosquitto_username_pw_set(h, user, o.password))
        }
        if o.broker.tls {
            // Without a CA file, the system's CAs (Debian's ca-certificates directory).
            try check("mosquitto_tls_set", mosquitto_tls_set(h, o.caFile, o.caFile == nil ? "/etc/ssl/certs" : nil,
                                                            o.certFile, o.keyFile, nil))
        }
        let will = Array(o.will.payload.utf8)
        try check("mosquitto_will_set_v5",
                  mosquitto_will_set_v5(h, o.will.topic, Int32(will.count), will, 1, true, nil))
        try check("mosquitto_reconnect_delay_set",
                  mosquitto_reconnect_delay_set(h, o.reconnectDelay.min, o.reconnectDelay.max, true))
        mosquitto_connect_v5_callback_set(h, mqttOnConnect)
        mosquitto_disconnect_v5_callback_set(h, mqttOnDisconnect)
        mosquitto_publish_v5_callback_set(h, mqttOnPublish)
        mosquitto_message_v5_callback_set(h, mqttOnMessage)
        mosquitto_log_callback_set(h, mqttOnLog)
        broker = o.broker
        keepAlive = o.keepAliveSeconds
    }

    private let broker: BrokerURL
    private let keepAlive: Int32
    private let looping = Mutex(false)

    /// The first connection: started here (a non-blocking connect), then the network thread
    /// takes over, and reconnects with the backoff after any later loss. libmosquitto's
    /// thread does not retry a first connection that failed at once (a refused port), so
    /// until one starts the caller retries this (MQTTSession); false: failed, `events` told why.
    func connect() -> Bool {
        let rc = mosquitto_connect_async(handle, broker.host, Int32(broker.port), keepAlive)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            callbacks.disconnected(rc)
            return false
        }
        let started = mosquitto_loop_start(handle) == MOSQ_ERR_SUCCESS.rawValue
        looping.withLock { $0 = started }
        return started
    }

    /// Ends a network thread that libmosquitto already let go (after a TLS failure), so
    /// that `connect` can start another.
    func stopLoop() {
        guard looping.withLock({ l in defer { l = false }; return l }) else { return }
        _ = mosquitto_loop_stop(handle, true)
    }

    /// Queues a message for the network thread; the message id (for its acknowledgement) or nil.
    /// `correlation`: MQTT 5 correlation data, for an answer to a request.
    @discardableResult
    func publish(_ topic: String, _ payload: Data, qos: Int32, retain: Bool, correlation: Data? = nil) -> Int32? {
        var props: OpaquePointer?
        defer { if props != nil { mosquitto_property_free_all(&props) } }
        if let c = correlation, !c.isEmpty, c.count <= Int(UInt16.max) {
            _ = c.withUnsafeBytes { mosquitto_property_add_binary(&props, Int32(MQTT_PROP_CORRELATION_DATA.rawValue),
                                                                  $0.baseAddress, UInt16(c.count)) }
        }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { p in
            mosquitto_publish_v5(handle, &mid, topic, Int32(p.count), p.baseAddress, qos, retain, props)
        }
        return rc == MOSQ_ERR_SUCCESS.rawValue ? mid : nil
    }

    /// Subscribes (QoS 1): not to our own messages, and with the retain flag as it was
    /// published, so that a retained command is known as one even when it arrives live.
    /// `noLocal`: the camera's own messages on it are not delivered back (all but the
    /// discovery probe, which is there to come back).
    func subscribe(_ topic: String, noLocal: Bool = true) {
        let options = Int32((noLocal ? MQTT_SUB_OPT_NO_LOCAL.rawValue : 0) | MQTT_SUB_OPT_RETAIN_AS_PUBLISHED.rawValue)
        _ = mosquitto_subscribe_v5(handle, nil, topic, 1, options, nil)
    }

    /// A clean DISCONNECT (no Last Will), then the network thread ends; once.
    func disconnect() {
        guard !stopped.withLock({ s in defer { s = true }; return s }) else { return }
        _ = mosquitto_disconnect_v5(handle, 0, nil)
    }

    /// Ends the network thread (force: at once, even mid-backoff) and frees the client.
    func close() {
        disconnect()
        if looping.withLock({ $0 }) { _ = mosquitto_loop_stop(handle, true) }
        mosquitto_destroy(handle)
        withExtendedLifetime(callbacks) {}
    }

    static let tlsErrorCode = MOSQ_ERR_TLS.rawValue

    static func describe(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(code))
    }

    /// A CONNACK's refusal in words (MQTT 5 reason codes; 3.1.1's 1...5 too).
    static func describeConnack(_ code: Int32) -> String {
        String(cString: mosquitto_reason_string(code))
    }
}
