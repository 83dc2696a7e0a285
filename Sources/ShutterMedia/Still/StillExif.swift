// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CExif
import ShutterCore

/// Builds the EXIF block (the APP1 payload, starting "Exif\0\0") with libexif.
enum StillExif {
    /// Largest APP1 payload: the segment length field is 16 bits and counts itself.
    static let maxPayload = 65533

    static func payload(_ m: StillMetadata, width: Int, height: Int, orientation: UInt16,
                        thumbnail: UnsafeRawBufferPointer?) throws -> [UInt8] {
        guard let ed = exif_data_new() else {
            throw MediaError(.exifFailed, "libexif could not allocate EXIF data (out of memory?)")
        }
        defer { exif_data_unref(ed) }
        // We write exactly the tags below; libexif's "fix up to spec" would add defaults of its own.
        exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        exif_data_set_data_type(ed, EXIF_DATA_TYPE_COMPRESSED)
        exif_data_set_byte_order(ed, EXIF_BYTE_ORDER_INTEL)
        let b = Builder(order: EXIF_BYTE_ORDER_INTEL)
        guard let ifd0 = ed.pointee.ifd.0, let ifd1 = ed.pointee.ifd.1, let exif = ed.pointee.ifd.2 else {
            throw MediaError(.exifFailed, "libexif returned EXIF data without its IFDs")
        }

        try b.ascii(ifd0, EXIF_TAG_MAKE, m.make)
        try b.ascii(ifd0, EXIF_TAG_MODEL, m.model)
        try b.short(ifd0, EXIF_TAG_ORIENTATION, orientation)
        try b.rational(ifd0, EXIF_TAG_X_RESOLUTION, 72, 1)
        try b.rational(ifd0, EXIF_TAG_Y_RESOLUTION, 72, 1)
        try b.short(ifd0, EXIF_TAG_RESOLUTION_UNIT, 2)  // inches
        try b.ascii(ifd0, EXIF_TAG_SOFTWARE, m.software)
        try b.short(ifd0, EXIF_TAG_YCBCR_POSITIONING, 1)  // centred, as libjpeg subsamples

        try b.undefined(exif, EXIF_TAG_EXIF_VERSION, Array("0232".utf8))  // 2.31+ has OffsetTime*
        try b.undefined(exif, EXIF_TAG_FLASH_PIX_VERSION, Array("0100".utf8))  // required by the spec
        try b.undefined(exif, EXIF_TAG_COMPONENTS_CONFIGURATION, [1, 2, 3, 0])  // Y Cb Cr
        try b.short(exif, EXIF_TAG_COLOR_SPACE, 1)  // sRGB
        try b.long(exif, EXIF_TAG_PIXEL_X_DIMENSION, UInt32(width))
        try b.long(exif, EXIF_TAG_PIXEL_Y_DIMENSION, UInt32(height))

        // Dates only from a clock something vouches for: no date beats a wrong one.
        if let t = m.captureTime, t.isTrusted {
            let (date, subsec, offset) = dateStrings(t)
            try b.ascii(ifd0, EXIF_TAG_DATE_TIME, date)
            try b.ascii(exif, EXIF_TAG_DATE_TIME_ORIGINAL, date)
            try b.ascii(exif, EXIF_TAG_DATE_TIME_DIGITIZED, date)
            try b.ascii(exif, EXIF_TAG_SUB_SEC_TIME, subsec)
            try b.ascii(exif, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, subsec)
            try b.ascii(exif, EXIF_TAG_SUB_SEC_TIME_DIGITIZED, subsec)
            try b.ascii(exif, EXIF_TAG_OFFSET_TIME, offset)
            try b.ascii(exif, EXIF_TAG_OFFSET_TIME_ORIGINAL, offset)
            try b.ascii(exif, EXIF_TAG_OFFSET_TIME_DIGITIZED, offset)
        }
        if let us = m.exposureTimeMicroseconds, us > 0 {
            try b.rational(exif, EXIF_TAG_EXPOSURE_TIME, UInt32(clamping: us), 1_000_000)
        }
        if let iso = m.isoSpeed {
            try b.short(exif, EXIF_TAG_ISO_SPEED_RATINGS, UInt16(iso))
        }
        if let f = m.fNumber, f > 0 {
            try b.rational(exif, EXIF_TAG_FNUMBER, UInt32(clamping: Int((f * 100).rounded())), 100)
        }
        if let mm = m.focalLengthMillimetres, mm > 0 {
            try b.rational(exif, EXIF_TAG_FOCAL_LENGTH, UInt32(clamping: Int((mm * 100).rounded())), 100)
        }
        if let d = m.lensPosition, d >= 0 {
            if d == 0 {
                try b.rational(exif, EXIF_TAG_SUBJECT_DISTANCE, 0xFFFF_FFFF, 1)  // EXIF: infinity
            } else {
                let mm = min(Double(UInt32.max - 1), (1000 / d).rounded())
                try b.rational(exif, EXIF_TAG_SUBJECT_DISTANCE, UInt32(mm), 1000)
            }
        }
        if let ev = m.exposureBias, ev.isFinite {
            try b.srational(exif, EXIF_TAG_EXPOSURE_BIAS_VALUE, Int32(clamping: Int((ev * 100).rounded())), 100)
        }
        if let metering = m.metering {
            try b.short(exif, EXIF_TAG_METERING_MODE, metering.exifValue)
        }
        if let auto = m.autoWhiteBalance {
            try b.short(exif, EXIF_TAG_WHITE_BALANCE, auto ? 0 : 1)  // 0 auto, 1 manual
        }
        if let zoom = m.digitalZoomRatio, zoom >= 1, zoom.isFinite {
            try b.rational(exif, EXIF_TAG_DIGITAL_ZOOM_RATIO, UInt32(clamping: Int((zoom * 100).rounded())), 100)
        }

        if let thumbnail, thumbnail.count > 0 {
            try b.short(ifd1, EXIF_TAG_COMPRESSION, 6)  // JPEG
            try b.rational(ifd1, EXIF_TAG_X_RESOLUTION, 72, 1)
            try b.rational(ifd1, EXIF_TAG_Y_RESOLUTION, 72, 1)
            try b.short(ifd1, EXIF_TAG_RESOLUTION_UNIT, 2)
            // libexif owns and frees `data` with its default allocator (free).
            guard let copy = malloc(thumbnail.count) else {
                throw MediaError(.exifFailed, "out of memory for the EXIF thumbnail")
            }
            copy.copyMemory(from: thumbnail.baseAddress!, byteCount: thumbnail.count)
            ed.pointee.data = copy.assumingMemoryBound(to: UInt8.self)
            ed.pointee.size = UInt32(thumbnail.count)
        }

        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt32 = 0
        exif_data_save_data(ed, &out, &size)
        guard let out, size > 0 else {
            throw MediaError(.exifFailed, "libexif could not serialise the EXIF block")
        }
        defer { free(out) }
        guard Int(size) <= maxPayload else {
            throw MediaError(.exifFailed, "EXIF block is \(size) bytes, over the 64 KiB APP1 limit: "
                             + "shorten make/model/software or the thumbnail")
        }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// "YYYY:MM:DD HH:MM:SS" in local time, milliseconds, and "+HH:MM".
    static func dateStrings(_ t: WallTime) -> (date: String, subsec: String, offset: String) {
        var local = time_t(t.secondsSinceEpoch + Int64(t.utcOffsetSeconds))
        var f = tm()
        gmtime_r(&local, &f)
        func pad(_ v: Int32, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        let date = "\(pad(f.tm_year + 1900, 4)):\(pad(f.tm_mon + 1, 2)):\(pad(f.tm_mday, 2)) "
            + "\(pad(f.tm_hour, 2)):\(pad(f.tm_min, 2)):\(pad(f.tm_sec, 2))"
        let subsec = pad(t.nanoseconds / 1_000_000, 3)
        let off = abs(t.utcOffsetSeconds) / 60
        let offset = (t.utcOffsetSeconds < 0 ? "-" : "+") + pad(off / 60, 2) + ":" + pad(off % 60, 2)
        return (date, subsec, offset)
    }

    /// Adds entries of one format; libexif frees `data` with free() when the entry dies.
    private struct Builder {
        let order: ExifByteOrder

        func ascii(_ ifd: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ s: String) throws {
            let bytes = Array(s.utf8) + [0]
            try add(ifd, tag, EXIF_FORMAT_ASCII, bytes.count) { p in
                bytes.withUnsafeBufferPointer { p.update(from: $0.baseAddress!, count: bytes.count) }
            }
        }

        func undefined(_ ifd: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ bytes: [UInt8]) throws {
            try add(ifd, tag, EXIF_FORMAT_UNDEFINED, bytes.count) { p in
                bytes.withUnsafeBufferPointer { p.update(from: $0.baseAddress!, count: bytes.count) }
            }
        }

        func short(_ ifd: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ v: UInt16) throws {
            try add(ifd, tag, EXIF_FORMAT_SHORT, 1) { exif_set_short($0, order, v) }
        }

        func long(_ ifd: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ v: UInt32) throws {
            try add(ifd, tag, EXIF_FORMAT_LONG, 1) { exif_set_long($0, order, v) }
        }

        func rational(_ ifd: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ num: UInt32,
                      _ den: UInt32) throws {
            let g = gcd(num, den)
            let r = ExifRational(numerator: num / g, denominator: den / g)
            try add(ifd, tag, EXIF_FORMAT_RATIONAL, 1) { exif_set_rational($0, order, r) }
        }

        func srational(_ ifd: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ num: Int32,
                       _ den: Int32) throws {
            let g = Int32(gcd(num.magnitude, den.magnitude))
            let r = ExifSRational(numerator: num / g, denominator: den / g)
            try add(ifd, tag, EXIF_FORMAT_SRATIONAL, 1) { exif_set_srational($0, order, r) }
        }

        private func gcd(_ a: UInt32, _ b: UInt32) -> UInt32 {
            var (a, b) = (a, b)
            while b != 0 { (a, b) = (b, a % b) }
            return max(a, 1)
        }

        private func add(_ ifd: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ format: ExifFormat,
                         _ components: Int, fill: (UnsafeMutablePointer<UInt8>) -> Void) throws {
            guard let e = exif_entry_new() else {
                throw MediaError(.exifFailed, "libexif could not allocate an entry (out of memory?)")
            }
            defer { exif_entry_unref(e) }
            let size = Int(exif_format_get_size(format)) * components
            guard let data = malloc(size) else {
                throw MediaError(.exifFailed, "out of memory for an EXIF entry")
            }
            let p = data.assumingMemoryBound(to: UInt8.self)
            fill(p)
            e.pointee.tag = tag
            e.pointee.format = format
            e.pointee.components = UInt(components)
            e.pointee.size = UInt32(size)
            e.pointee.data = p
            exif_content_add_entry(ifd, e)
        }
    }
}
