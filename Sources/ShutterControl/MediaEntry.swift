// SPDX-License-Identifier: BSD-2-Clause
/// A finished photo or clip on the card, as `files` lists it and `delete` names it.
public struct MediaEntry: Codable, Sendable, Equatable {
    /// The DCF number as one integer, directory then file: 1000007 = 100SHUTR/SHTR0007
    /// (the web page's `/files/1000007`); what `delete` takes.
    public var number: Int
    /// "SHTR0007.JPG".
    public var name: String
    /// "photo" or "video".
    public var kind: String
    public var bytes: UInt64
    /// Last modified, ISO 8601 in UTC: the wall clock's word, which may have jumped
    /// (the number, not the time, says which file is newer).
    public var modified: String

    public init(number: Int, name: String, kind: String, bytes: UInt64, modified: String) {
        self.number = number
        self.name = name
        self.kind = kind
        self.bytes = bytes
        self.modified = modified
    }
}
