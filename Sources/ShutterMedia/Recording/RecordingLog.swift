#if canImport(Glibc)
import Glibc
#endif

/// Recording's log lines: stderr with a `<N>` priority prefix so journald keeps the level.
enum RecordingLog {
    static func warning(_ text: String) { emit(4, text) }
    static func info(_ text: String) { emit(6, text) }
    static func error(_ text: String) { emit(3, text) }

    private static func emit(_ priority: Int, _ text: String) {
        let line = "<\(priority)>shutter.recording: \(text)\n"
        // One write(2) per line so lines from threads do not interleave.
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
