// SPDX-License-Identifier: BSD-2-Clause

/// Connections the broker closes right after they open, several in a row: another client
/// uses the camera's client id (the broker lets the newest in, and each reconnect takes the
/// id back from the other). Said once, with what to do; quiet until a connection holds.
struct MQTTTakeover {
    /// A connection closed sooner than this is a short one.
    static let shortSeconds = 5.0
    /// This many short ones in a row: another client with the same id.
    static let inARow = 3
    /// A connection open this long holds again.
    static let steadySeconds = 30.0

    private var shortInARow = 0
    private var openedAt: Double?

    /// Whether the connection is being taken over (its lines are not logged meanwhile).
    var flapping: Bool { shortInARow >= Self.inARow }

    mutating func opened(at now: Double) { openedAt = now }

    /// The connection closed; true when this one makes it a takeover (say it now, once).
    mutating func closed(at now: Double) -> Bool {
        defer { openedAt = nil }
        guard let o = openedAt, now - o < Self.shortSeconds else {
            shortInARow = 0
            return false
        }
        shortInARow += 1
        return shortInARow == Self.inARow
    }

    /// Asked `steadySeconds` after a connection opened at `openedAt`: true when that
    /// connection still holds and it had been a takeover (say it is over).
    mutating func holds(openedAt: Double) -> Bool {
        guard self.openedAt == openedAt, flapping else { return false }
        shortInARow = 0
        return true
    }
}
