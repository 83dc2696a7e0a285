/// Shutter's version, as `deploy/version.sh` gives it ("0.3.0", "0.3.0+5.gabc1234"):
/// `shutterd --version`, `shutterctl --version`, `status.version`, the first log line,
/// systemd's STATUS= at start and EXIF Software.
///
/// SwiftPM runs no script at build time, so `make` writes the stamp into a git-ignored
/// file (VersionStamp.swift: `extension ShutterVersion { static var stamp }`). That
/// member, on the type, wins over the protocol's default below, which stands in when the
/// file is absent (`swift build` alone in a fresh clone).
public enum ShutterVersion: VersionStampDefault {
    public static let string: String = stamp ?? "unknown"

    /// EXIF Software: "Shutter 0.3.0".
    public static var software: String { "Shutter \(string)" }
}

public protocol VersionStampDefault {}

extension VersionStampDefault {
    static var stamp: String? { nil }
}
