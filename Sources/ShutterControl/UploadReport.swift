// SPDX-License-Identifier: BSD-2-Clause
/// What the uploader says about the queue (`status.upload`, `shutterctl upload status`):
/// sent by the uploader (in the connector, or in shutterd without one) to shutterd, which
/// keeps the last one for its status.
public struct UploadReport: Codable, Sendable, Equatable {
    /// The batch being copied now.
    public struct Current: Codable, Sendable, Equatable {
        /// Its first file ("DCIM/100SHUTR/SHTR0001.JPG") and how many files it holds.
        public var file: String
        public var files: Int
        public var bytes: UInt64
        /// What rclone reported sent so far.
        public var sentBytes: UInt64
        public init(file: String, files: Int, bytes: UInt64, sentBytes: UInt64 = 0) {
            self.file = file
            self.files = files
            self.bytes = bytes
            self.sentBytes = sentBytes
        }
    }

    /// "nas:camera/garden".
    public var remote: String
    /// `shutterctl upload pause` holds it until `resume`.
    public var paused: Bool = false
    /// Files (and their bytes) not yet verified, the one in progress included.
    public var waitingFiles: Int = 0
    public var waitingBytes: UInt64 = 0
    /// Files whose copy is verified (on the card now).
    public var verifiedFiles: Int = 0
    /// Files whose last try failed (they are tried again).
    public var failedFiles: Int = 0
    /// Seconds the oldest waiting file has waited (by its time on the card).
    public var oldestWaitingSeconds: Double? = nil
    public var current: Current? = nil
    /// The last failure, in words that say what to do; cleared by a success.
    public var lastError: String? = nil
    /// The last file verified, and its copy ("nas:camera/2026/12/05/SHTR0001.JPG").
    public var lastUploaded: String? = nil
    public var lastRemote: String? = nil
    /// No upload has worked for `upload.alertMinutes` while files wait.
    public var failing: Bool = false

    public init(remote: String) { self.remote = remote }

    private enum CodingKeys: String, CodingKey {
        case remote, paused, waitingFiles, waitingBytes, verifiedFiles, failedFiles, oldestWaitingSeconds, current
        case lastError, lastUploaded, lastRemote, failing
    }

    // By hand: a key the sender did not write (an older or newer connector) is its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        remote = try c.decode(String.self, forKey: .remote)
        paused = try c.decodeIfPresent(Bool.self, forKey: .paused) ?? false
        waitingFiles = try c.decodeIfPresent(Int.self, forKey: .waitingFiles) ?? 0
        waitingBytes = try c.decodeIfPresent(UInt64.self, forKey: .waitingBytes) ?? 0
        verifiedFiles = try c.decodeIfPresent(Int.self, forKey: .verifiedFiles) ?? 0
        failedFiles = try c.decodeIfPresent(Int.self, forKey: .failedFiles) ?? 0
        oldestWaitingSeconds = try c.decodeIfPresent(Double.self, forKey: .oldestWaitingSeconds)
        current = try c.decodeIfPresent(Current.self, forKey: .current)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        lastUploaded = try c.decodeIfPresent(String.self, forKey: .lastUploaded)
        lastRemote = try c.decodeIfPresent(String.self, forKey: .lastRemote)
        failing = try c.decodeIfPresent(Bool.self, forKey: .failing) ?? false
    }
}
