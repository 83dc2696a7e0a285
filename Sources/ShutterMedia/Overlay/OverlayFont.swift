// SPDX-License-Identifier: BSD-2-Clause
import CShutterOverlay
import Synchronization

/// A font file opened by FreeType, rendering text to `OverlayStamp`s. FreeType's face is
/// not thread-safe: every render holds the lock.
public final class OverlayFont: Sendable {
    // A ~Copyable owner of the C handle, closed once.
    private struct Handle: ~Copyable {
        let font: OpaquePointer
        deinit { shutter_font_close(font) }
    }
    private let handle: Mutex<Handle>
    public let path: String

    /// Throws a message naming the file when it is missing or not a font.
    public init(path: String) throws(OverlayError) {
        var err = [CChar](repeating: 0, count: 256)
        guard let f = shutter_font_open(path, &err, err.count) else {
            throw OverlayError(message: String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                                               as: UTF8.self))
        }
        handle = Mutex(Handle(font: f))
        self.path = path
    }

    /// `text` with glyph lines `pixelHeight` high and a margin of `pad` pixels (the box), or
    /// nil when FreeType fails.
    public func render(_ text: String, pixelHeight: Int, pad: Int, box: Int) -> OverlayStamp? {
        handle.withLock { h -> OverlayStamp? in
            var w: Int32 = 0, hgt: Int32 = 0
            guard shutter_font_render(h.font, text, Int32(pixelHeight), Int32(pad), nil, 0, &w, &hgt) == 0,
                  w > 0, hgt > 0 else { return nil }
            let count = Int(w) * Int(hgt)
            var ok = false
            let alpha = [UInt8](unsafeUninitializedCapacity: count) { buf, n in
                ok = shutter_font_render(h.font, text, Int32(pixelHeight), Int32(pad), buf.baseAddress, count,
                                         &w, &hgt) == 0
                n = count
            }
            guard ok else { return nil }
            return OverlayStamp(text: text, width: Int(w), height: Int(hgt), alpha: alpha, box: box)
        }
    }
}

public struct OverlayError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
