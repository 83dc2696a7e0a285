// SPDX-License-Identifier: BSD-2-Clause
/// One trigger input as it stands (`status.triggers`, docs/triggers.md): its line, what it
/// does, and what it has done since the start.
public struct TriggerReport: Codable, Sendable, Equatable {
    /// Its name (`triggers.inputs`), as events, MQTT and the page say it.
    public var name: String
    /// "photo", "burst" or "clip".
    public var action: String
    /// The debounced level: active now.
    public var active: Bool = false
    /// Activations that asked for a capture, and those that asked for nothing (`ignored`:
    /// within the hold-off, outside the windows).
    public var fired: Int = 0
    public var ignored: Int = 0
    /// Photos and clips saved for it.
    public var photos: Int = 0
    public var clips: Int = 0
    /// Captures it asked for that could not be made (the camera busy past the wait, not ready,
    /// refused, failed).
    public var skipped: Int = 0
    /// `triggers.inputs[].windows` ("" = all day), and whether an activation now would be
    /// in one (false too while the wall clock is not trusted).
    public var windows: String = ""
    public var windowOpen: Bool = true
    /// Why the line does nothing (it could not be requested); absent when it works.
    public var problem: String? = nil

    public init(name: String, action: String) {
        self.name = name
        self.action = action
    }
}
