// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Recording's log lines, through the one logger (journald levels). Per-clip
/// progress is debug: the service logs the clip it saved under its final name.
enum RecordingLog {
    private static let log = Log("shutter.recording")
    static func warning(_ text: String) { log.warning(text) }
    static func info(_ text: String) { log.debug(text) }
    /// How far the clip is on the storage, one line per synced fragment: info, so the
    /// journal (and a power-cut test reading the console) has it at the default level.
    static func durable(_ text: String) { log.info(text) }
    static func error(_ text: String) { log.error(text) }
}
