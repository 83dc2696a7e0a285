// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore
import ShutterStorage

/// `files` and `delete`: the card's finished photos and clips, for shutterctl and
/// the web page's `DELETE /api/files/N` alike. The one place the rule for deleting lives:
///
/// - A number names a finished photo or clip. The clip being recorded is refused
///   (busy); anything else not finished on the card is not found.
/// - `last` is the photo just taken (the seeds' "retake"): the newest file on the
///   card, when it is a photo. Never a clip; refused while a capture is in progress
///   (the photo just taken may not be saved yet, and a photo during a recording is
///   no retake), and when a capture ended while the newest file was looked for.
///
/// Listing and deleting touch the card, so they run as jobs and come back as
/// `.filesListed`, `.newestFile` and `.deleted`.
final class CardFiles {
    private let ctx: ServiceContext
    private let jobs: Jobs
    private var waiting: [Int: Reply] = [:]
    /// `delete last` while its newest file is looked for: the captures saved when it was asked.
    private var lastAsked: [Int: Int] = [:]
    private var nextOp = 0

    init(ctx: ServiceContext, jobs: Jobs) {
        self.ctx = ctx
        self.jobs = jobs
    }

    private func op(_ reply: Reply) -> Int {
        nextOp += 1
        waiting[nextOp] = reply
        return nextOp
    }

    /// Every look at the card for `files` and `delete` (listing, unlink, fsync) runs here,
    /// in order: never on the loop nor on Swift's task pool, which a hung card would stall.
    static let queue = DispatchQueue(label: "shutter.card.files")

    func list(_ reply: Reply) {
        let op = op(reply), storage = ctx.storage
        jobs.run(on: Self.queue) { .filesListed(op: op, storage.finishedMedia()) }
    }

    func listed(op: Int, _ items: [MediaItem]) {
        var r = ControlReply(ok: true)
        r.items = items.map(Self.entry)
        waiting.removeValue(forKey: op)?.send(r)
    }

    /// `inProgress`: what the camera is doing, nil between captures; `saved`: captures saved so far.
    func delete(_ target: ServiceCommand.DeleteTarget, inProgress: String?, saved: Int, _ reply: Reply) {
        switch target {
        case .last:
            if let inProgress {
                var r = ControlReply.failure("busy: \(inProgress): `delete last` deletes the photo just taken, so not while "
                                             + "a capture is in progress; name a file by its number (`shutterctl files`)")
                r.busy = true
                return reply.send(r)
            }
            let op = op(reply), storage = ctx.storage
            lastAsked[op] = saved
            jobs.run(on: Self.queue) { .newestFile(op: op, storage.finishedMedia().first) }
        case .number(let number):
            start(op(reply), number)
        }
    }

    /// `delete last`: the newest file, looked for on the card.
    func newestFound(op: Int, _ newest: MediaItem?, inProgress: String?, saved: Int) {
        guard let asked = lastAsked.removeValue(forKey: op) else { return }
        guard inProgress == nil, saved == asked else {
            var r = ControlReply.failure("busy: a capture began while `delete last` looked for the photo just taken; "
                                         + "nothing was deleted: ask again")
            r.busy = true
            return refuse(op, r)
        }
        guard let newest, newest.kind == .photo else {
            var r = ControlReply.failure(newest.map {
                "no photo just taken: the newest file is the clip \($0.fileName) (`delete last` never deletes a clip; "
                    + "delete it by its number, \($0.number.webNumber))"
            } ?? "no photo just taken: there are no photos or clips on the card")
            r.notFound = true
            return refuse(op, r)
        }
        start(op, newest.number)
    }

    private func refuse(_ op: Int, _ reply: ControlReply) {
        waiting.removeValue(forKey: op)?.send(reply)
    }

    private func start(_ op: Int, _ number: DCFNumber) {
        let storage = ctx.storage
        jobs.run(on: Self.queue) {
            let item = storage.media(number)
            return .deleted(op: op, number, Result { () throws(StorageError) in try storage.deleteMedia(number) }, item)
        }
    }

    /// A delete came back from the card; returns the path of the file deleted (as
    /// replies and `status.lastFiles` name files), if it was.
    func deleted(op: Int, _ number: DCFNumber, _ outcome: Result<Storage.DeleteOutcome, StorageError>,
                 _ item: MediaItem?) -> String? {
        let reply = waiting.removeValue(forKey: op)
        switch outcome {
        case .success(.deleted):
            let name = item?.fileName ?? number.fileName(extension: "JPG")
            ctx.log.notice("deleted \(number.directoryName)/\(name)")
            var r = ControlReply(ok: true)
            r.deleted = item.map(Self.entry)
            reply?.send(r)
            return PlainIO.path(ctx.storage.dcim, "\(number.directoryName)/\(name)")
        case .success(.beingWritten):
            var r = ControlReply.failure("busy: \(number) is the clip being recorded; stop the recording first")
            r.busy = true
            reply?.send(r)
        case .success(.notFound):
            var r = ControlReply.failure("no such file: \(number.webNumber) is no finished photo or clip on the card")
            r.notFound = true
            reply?.send(r)
        case .failure(let e):
            ctx.log.warning("could not delete \(number): \(e)")
            reply?.send(.failure("could not delete \(number): \(e)"))
        }
        return nil
    }

    static let usage = "delete needs a file's number, as `shutterctl files` lists it (e.g. 1000007), or last"

    static func entry(_ item: MediaItem) -> MediaEntry {
        let time = Date(timeIntervalSince1970: item.modified)
        return MediaEntry(number: item.number.webNumber, name: item.fileName, kind: item.kind.rawValue, bytes: item.bytes,
                          modified: time.formatted(.iso8601))
    }
}
