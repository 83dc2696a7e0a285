// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage
import Synchronization

/// One event waiting to be posted, kept on the card (`.webhook/<key>.json`, a
/// `RecordFolder`) until the receiver answered 2xx; then it is removed, durably.
struct WebhookEvent: Codable, Equatable, Sendable {
    /// "photo" or "clip".
    var event: String
    /// "DCIM/100SHUTR/SHTR0001.JPG", below the storage root.
    var file: String
    var bytes: UInt64
    /// When it happened: wall seconds, and whether the clock was trusted then.
    var time: Double
    var timeTrusted: Bool
    /// A way in other than the button or a request ("interval", "trigger"), and the trigger
    /// input that made it ("pir"); absent for the button's (and in records written before).
    var source: String?
    var trigger: String?
    var attempts = 0
    var nextTry: Double?
    var lastError: String?
}

/// The webhook's queue: events in the order they happened (their keys sort so), at most
/// `limit` (the oldest is dropped past it, and said: a receiver gone for weeks does not fill
/// the card).
struct WebhookQueue: Sendable {
    static let folder = ".webhook"
    let records: RecordFolder<WebhookEvent>
    let sync: CardSync
    let limit = 1000

    init(root: String, sync: CardSync) {
        records = RecordFolder(root: root, name: Self.folder)
        self.sync = sync
    }

    /// Keeps `event` (durably: it was seen, it will be posted); its key.
    @discardableResult
    func add(_ event: WebhookEvent) throws -> String {
        let key = String(Int64(event.time * 1000)) + "-" + PlainIO.lastComponent(event.file)
        try records.write(event, key, durable: true, sync: sync)
        let all = keys()
        if all.count > limit {
            for old in all.prefix(all.count - limit) {
                try? records.remove(old, sync: sync)
                Log("shutter.webhook").warning("webhook: more than \(limit) events wait; the oldest (\(old)) was dropped")
            }
        }
        return key
    }

    /// Every key, oldest first.
    func keys() -> [String] {
        records.keys().sorted { a, b in
            let ta = Int64(a.prefix { $0 != "-" }) ?? 0, tb = Int64(b.prefix { $0 != "-" }) ?? 0
            return ta != tb ? ta < tb : a < b
        }
    }
}
