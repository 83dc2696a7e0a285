// SPDX-License-Identifier: BSD-2-Clause
/// The flash LED's mode, like AVCaptureDevice.FlashMode. A double tap cycles
/// off → auto → on → off. The same mode governs the torch during video:
/// on = torch on, auto = torch when the scene is dark at the start, off = never.
public enum FlashMode: String, Sendable, Codable, CaseIterable {
    case off, auto, on

    public var next: FlashMode {
        switch self {
        case .off: return .auto
        case .auto: return .on
        case .on: return .off
        }
    }
}
