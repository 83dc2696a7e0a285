// SPDX-License-Identifier: BSD-2-Clause
/// A DCF file number: directory 100...999 (`100SHUTR`) and file 0001...9999
/// (`SHTR0001`). Photos and videos share one sequence; after `SHTR9999` the
/// next number is the next directory's `SHTR0001`. `ordinal` counts them from 0.
public struct DCFNumber: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let directoryRange = 100...999
    public static let fileRange = 1...9999
    public static let directorySuffix = "SHUTR"
    public static let filePrefix = "SHTR"
    /// How many numbers there are in all (ordinals are 0..<count).
    public static let count = directoryRange.count * fileRange.count
    public static let first = DCFNumber(ordinal: 0)!

    public let directory: Int
    public let file: Int

    public init?(directory: Int, file: Int) {
        guard Self.directoryRange.contains(directory), Self.fileRange.contains(file) else { return nil }
        self.directory = directory
        self.file = file
    }

    public init?(ordinal: Int) {
        guard (0..<Self.count).contains(ordinal) else { return nil }
        self.init(directory: 100 + ordinal / 9999, file: 1 + ordinal % 9999)
    }

    public var ordinal: Int { (directory - 100) * 9999 + (file - 1) }

    /// Nil after 999SHUTR/SHTR9999.
    public var successor: DCFNumber? { DCFNumber(ordinal: ordinal + 1) }

    /// "100SHUTR".
    public var directoryName: String { "\(directory)\(Self.directorySuffix)" }

    /// "SHTR0001.JPG".
    public func fileName(extension ext: String) -> String {
        let digits = String(file)
        return Self.filePrefix + String(repeating: "0", count: 4 - digits.count) + digits + "." + ext
    }

    /// "100SHUTR/SHTR0001".
    public var description: String { directoryName + "/" + fileName(extension: "").dropLast() }

    public static func < (a: DCFNumber, b: DCFNumber) -> Bool { a.ordinal < b.ordinal }

    /// Reads "100SHUTR/SHTR0001" (the form `description` writes).
    public init?(text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let d = Self.directoryNumber(String(parts[0])),
              let f = Self.fileNumber(String(parts[1]) + ".X")?.file else { return nil }
        self.init(directory: d, file: f)
    }

    /// 100 for "100SHUTR" (any letter case, as FAT may show it), else nil.
    public static func directoryNumber(_ name: String) -> Int? {
        let u = Array(name.uppercased().utf8)
        guard u.count == 8, String(decoding: u[3...], as: UTF8.self) == directorySuffix,
              u[0..<3].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let n = Int(String(decoding: u[0..<3], as: UTF8.self)), directoryRange.contains(n) else { return nil }
        return n
    }

    /// (1, "JPG") for "SHTR0001.JPG" (any letter case), else nil.
    public static func fileNumber(_ name: String) -> (file: Int, ext: String)? {
        let u = Array(name.uppercased().utf8)
        guard u.count >= 10, String(decoding: u[0..<4], as: UTF8.self) == filePrefix, u[8] == UInt8(ascii: "."),
              u[4..<8].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let n = Int(String(decoding: u[4..<8], as: UTF8.self)), fileRange.contains(n) else { return nil }
        return (n, String(decoding: u[9...], as: UTF8.self))
    }
}
