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

/// What libmosquitto's network thread reports, as values.
enum MQTTClientEvent: Sendable {
    /// CONNACK: 0 = accepted, else the broker's reason (or libmosquitto's error).
    case connected(code: Int32)
    /// The connection ended (0 = we asked for it); the network thread reconnects.
    /// `reason`: in words, read where it happened (errno is the failing thread's).
    case disconnected(code: Int32, reason: String)
    /// A TLS failure (OpenSSL's first error line as libmosquitto logs it): libmosquitto's
    /// network thread ends after one (its loop_forever returns on MOSQ_ERR_TLS and EPROTO),
    /// without a disconnect callback and without reconnecting; the session starts it again.
    case tlsFailed(reason: String)
    /// A QoS 1 message was acknowledged (or a QoS 0 one written).
    case published(mid: Int32)
    case message(MQTTIncoming)
}

/// A message as received, copied out of libmosquitto's buffers.
struct MQTTIncoming: Sendable {
    var topic: String
    var payload: Data
    /// Delivered because the broker kept it (a retained message met at subscription).
    var retained: Bool
    /// MQTT 5 request/response: where the answer goes, and what it carries back.
    var responseTopic: String?
    var correlation: Data?
}

/// The context libmosquitto hands back to every callback: one per client, alive as long
/// as it (MQTTClient keeps it). `deliver` must only take the value (it runs on the
/// network thread, which must not wait).
final class MQTTCallbackBox: Sendable {
    let deliver: @Sendable (MQTTClientEvent) -> Void
    init(deliver: @escaping @Sendable (MQTTClientEvent) -> Void) { self.deliver = deliver }

    /// A disconnection with its reason (errno must be read on the thread that failed: call this there).
    func disconnected(_ code: Int32) {
        deliver(.disconnected(code: code, reason: code == 0 ? "" : MQTTClient.describe(code)))
    }
}

// The trampolines are free functions of this (nonisolated) file: a @convention(c) closure
// written in main-actor code inherits the main actor and traps on libmosquitto's thread.

private func box(_ obj: UnsafeMutableRawPointer?) -> MQTTCallbackBox? {
    obj.map { Unmanaged<MQTTCallbackBox>.fromOpaque($0).takeUnretainedValue() }
}

func mqttOnConnect(_ m: OpaquePointer?, _ obj: UnsafeMutableRawPointer?, _ rc: Int32, _ flags: Int32,
                   _ props: OpaquePointer?) {
    box(obj)?.deliver(.connected(code: rc))
}

func mqttOnDisconnect(_ m: OpaquePointer?, _ obj: UnsafeMutableRawPointer?, _ rc: Int32, _ props: OpaquePointer?) {
    box(obj)?.disconnected(rc)
}

/// libmosquitto's log: only the first line of an OpenSSL failure is taken ("OpenSSL
/// Error[0]: error:0A000086:SSL routines::certificate verify failed"), the rest is its debug.
func mqttOnLog(_ m: OpaquePointer?, _ obj: UnsafeMutableRawPointer?, _ level: Int32, _ text: UnsafePointer<CChar>?) {
    guard level & MOSQ_LOG_ERR != 0, let b = box(obj), let text else { return }
    let line = String(cString: text)
    if line.hasPrefix("OpenSSL Error[0]") { b.deliver(.tlsFailed(reason: line)) }
}

func mqttOnPublish(_ m: OpaquePointer?, _ obj: UnsafeMutableRawPointer?, _ mid: Int32, _ reason: Int32,
                   _ props: OpaquePointer?) {
    box(obj)?.deliver(.published(mid: mid))
}

func mqttOnMessage(_ m: OpaquePointer?, _ obj: UnsafeMutableRawPointer?, _ msg: UnsafePointer<mosquitto_message>?,
                   _ props: OpaquePointer?) {
    guard let b = box(obj), let msg = msg?.pointee else { return }
    let topic = msg.topic.map { String(cString: $0) } ?? ""
    let payload = msg.payload.map { Data(bytes: $0, count: Int(max(0, msg.payloadlen))) } ?? Data()
    var responseTopic: String?
    var text: UnsafeMutablePointer<CChar>?
    if mosquitto_property_read_string(props, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), &text, false) != nil, let text {
        responseTopic = String(cString: text)
        free(text)
    }
    var correlation: Data?
    var bytes: UnsafeMutableRawPointer?
    var length: UInt16 = 0
    if mosquitto_property_read_binary(props, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &bytes, &length, false) != nil {
        correlation = bytes.map { Data(bytes: $0, count: Int(length)) } ?? Data()
        free(bytes)
    }
    b.deliver(.message(MQTTIncoming(topic: topic, payload: payload, retained: msg.retain,
                                    responseTopic: responseTopic, correlation: correlation)))
}
