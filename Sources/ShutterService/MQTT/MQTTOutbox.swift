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

/// The events (QoS 1) on their way to the broker, in order, bounded. libmosquitto's own
/// queue has no bound: a broker that stops reading would grow it by every capture. So
/// events wait here, and only a few at a time are handed to the client (`inflightLimit`,
/// freed by their acknowledgements); while the broker is away or slow they queue here,
/// and past `capacity` the oldest go, counted (`dropped`), never the capture.
struct MQTTOutbox {
    struct Message: Equatable {
        var topic: String
        var payload: Data
    }

    let capacity: Int
    let inflightLimit: Int
    /// Not yet handed to the client, oldest first.
    private(set) var queued: [Message] = []
    /// Handed over, not yet acknowledged: message id → when it was handed over.
    private(set) var inflight: [Int32: MonotonicTime] = [:]
    private(set) var dropped = 0

    init(capacity: Int = 256, inflightLimit: Int = 16) {
        self.capacity = capacity
        self.inflightLimit = inflightLimit
    }

    /// Queues an event; true when the oldest was dropped to make room.
    mutating func enqueue(_ m: Message) -> Bool {
        queued.append(m)
        guard queued.count > capacity else { return false }
        queued.removeFirst(queued.count - capacity)
        dropped += 1
        return true
    }

    /// The next event to hand over now, if the client may take one more.
    /// Handed-over messages the broker never acknowledged in `patience` stop holding a
    /// place (libmosquitto itself resends what is in flight after a reconnect).
    mutating func next(now: MonotonicTime, patience: Duration = .seconds(120)) -> Message? {
        inflight = inflight.filter { now - $0.value < patience }
        guard inflight.count < inflightLimit, !queued.isEmpty else { return nil }
        return queued.removeFirst()
    }

    /// `m` was handed to the client as `mid`; nil (the client refused it): back to the front.
    mutating func handed(_ m: Message, mid: Int32?, now: MonotonicTime) {
        if let mid { inflight[mid] = now } else { queued.insert(m, at: 0) }
    }

    mutating func acknowledged(_ mid: Int32) { inflight.removeValue(forKey: mid) }
}
