// SPDX-License-Identifier: BSD-2-Clause
import Synchronization

/// One thing that happened, for whoever watches live (the page's `/api/events`,
/// `shutterctl events`, MQTT): a type ("state", "file", "deleted", "setting", "camera", "gesture")
/// and its facts as one JSON object.
public struct LiveEvent: Sendable, Equatable {
    public let type: String
    public let data: JSONObject
    public init(type: String, data: JSONObject) {
        self.type = type
        self.data = data
    }
}

/// The service's live events, from the loop to any number of watchers. A watcher
/// gets the current state first, then every event in the order the loop published
/// them. Delivery is a call under this type's lock, so a watcher's closure must only
/// take the event (append to its own buffer, wake its connection) and never wait.
public final class LiveEvents: Sendable {
    private struct State {
        var watchers: [Int: @Sendable (LiveEvent) -> Void] = [:]
        var nextID = 0
        var lastState: LiveEvent?
    }
    private let state = Mutex(State())

    public init() {}

    public func publish(_ event: LiveEvent) {
        state.withLock { s in
            if event.type == "state" { s.lastState = event }
            for deliver in s.watchers.values { deliver(event) }
        }
    }

    /// Starts delivering to `deliver` (the current state first); the id ends it.
    public func watch(_ deliver: @escaping @Sendable (LiveEvent) -> Void) -> Int {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.watchers[id] = deliver
            if let last = s.lastState { deliver(last) }
            return id
        }
    }

    public func stopWatching(_ id: Int) { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }

    public var watcherCount: Int { state.withLock { $0.watchers.count } }
}
