// SPDX-License-Identifier: BSD-2-Clause
/// One API token as `shutterctl web-token list` shows it (never the token itself:
/// the service keeps only its digest).
public struct WebTokenListing: Codable, Sendable, Equatable {
    public var name: String
    /// "view" or "control".
    public var scope: String
    /// ISO 8601, UTC, by the Pi's clock.
    public var created: String
    /// The last request it was accepted on; absent when never.
    public var lastUsed: String?

    public init(name: String, scope: String, created: String, lastUsed: String? = nil) {
        self.name = name
        self.scope = scope
        self.created = created
        self.lastUsed = lastUsed
    }
}
