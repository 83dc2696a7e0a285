// SPDX-License-Identifier: BSD-2-Clause
import CShutterVersion

/// Shutter's version, as `deploy/version.sh` gives it ("0.3.0", "0.3.0+5.gabc1234"):
/// `shutterd --version`, `shutterctl --version`, `status.version`, the first log line,
/// systemd's STATUS= at start and EXIF Software.
///
/// SwiftPM runs no script at build time, so `make` writes the stamp into a git-ignored C
/// header (deploy/version-stamp.sh); "unknown" when nothing did (`swift build` alone in a
/// fresh clone).
public enum ShutterVersion {
    public static let string: String = shutter_version_stamp().map { String(cString: $0) } ?? "unknown"

    /// EXIF Software: "Shutter 0.3.0".
    public static var software: String { "Shutter \(string)" }
}
