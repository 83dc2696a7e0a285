// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// What the camera did with the sensor controls and sizes it was asked for,
/// logged when it changes (one warning per control it lacks, so nothing asked
/// for is dropped silently); a camera restart with the same outcome stays quiet.
struct CameraReportLog {
    private var lackingLogged: [LackingControl]?
    private var videoSize: PixelSize?
    private var stillSize: PixelSize?
    private var stillStream: StillStreamReport?
    private var bufferMemory: BufferMemoryReport?
    /// The camera last started: another one (a switch) is not started "again".
    private var cameraID: String?

    /// After a camera start: the granted video size and each lacking control.
    mutating func started(camera: any CameraDevice, opening: CameraOpening, restart: Bool, log: Log) {
        let restart = restart && camera.info.id == cameraID
        cameraID = camera.info.id
        let report = camera.controlReport
        let size = report.videoSize
        let shown = !restart || size != videoSize
            ? size.map { ", video \(Self.granted($0, of: opening.videoSizes, note: report.videoSizeNote))" } ?? "" : ""
        log.notice("camera \(camera.info.model) started\(restart ? " again" : "")\(shown)")
        videoSize = size
        // Once, and again only when it changes (a camera switch, a pipeline that refused it).
        if let still = report.stillStream, still != stillStream {
            if still.granted { log.notice("\(still): the press photo") } else { log.notice("\(still)") }
            stillStream = still
        }
        if let memory = report.bufferMemory, memory != bufferMemory {
            log.notice("camera buffers: \(memory)")
            bufferMemory = memory
        }
        lacking(report.lacking, log: log)
    }

    /// After a still: its granted size, when first known or changed, and any
    /// control the still's start lacked that video did not.
    mutating func still(camera: (any CameraDevice)?, opening: CameraOpening, log: Log) {
        guard let report = camera?.controlReport else { return }
        if let size = report.stillSize, size != stillSize {
            log.notice("stills are \(Self.granted(size, of: opening.stillSizes))")
            stillSize = size
        }
        lacking(report.lacking, log: log)
    }

    mutating func lacking(_ lacking: [LackingControl], log: Log) {
        guard lacking != lackingLogged else { return }
        let before = lackingLogged ?? []
        for l in lacking where !before.contains(l) {
            log.warning("camera control not applied: \(l) (\(l.keys.joined(separator: ", ")))")
        }
        lackingLogged = lacking
    }

    /// "1280x720 (preference 2 of 2; not granted: 1920x1080)", or that the
    /// camera granted none of the list, and how the size came about (`note`).
    static func granted(_ size: PixelSize, of asked: [PixelSize], note: String? = nil) -> String {
        let list = asked.map(\.description).joined(separator: ", ")
        guard let entry = SizePreference.entry(of: size, in: asked) else {
            return "\(size) (asked \(list): none granted, \(note ?? "the camera adjusted to this"))"
        }
        if asked.count == 1 { return "\(size) (as asked)" }
        let refused = asked[..<entry].map(\.description).joined(separator: ", ")
        return "\(size) (preference \(entry + 1) of \(asked.count)\(refused.isEmpty ? "" : "; not granted: \(refused)"))"
    }
}
