import ShutterCore

/// What the camera did with the sensor controls and sizes it was asked for:
/// logged when it changes (one warning per control it lacks, so nothing asked
/// for is dropped silently) and shown in `status`.
extension CameraService {
    /// What was last logged, so a camera restart with the same outcome stays quiet.
    struct CameraReportLog {
        var lacking: [LackingControl]?
        var videoSize: PixelSize?
        var stillSize: PixelSize?
        var stillStream: StillStreamReport?
        /// The camera last started: another one (a switch) is not started "again".
        var cameraID: String?
    }

    /// After a camera start: the granted video size and each lacking control.
    func logCameraReport(model: String, restart: Bool) {
        let restart = restart && camera?.info.id == reportLog.cameraID
        reportLog.cameraID = camera?.info.id
        let report = camera?.controlReport
        let size = report?.videoSize
        let shown = !restart || size != reportLog.videoSize
            ? size.map { ", video \(Self.granted($0, of: cameraOpening.videoSizes))" } ?? "" : ""
        log.notice("camera \(model) started\(restart ? " again" : "")\(shown)")
        reportLog.videoSize = size
        // Once, and again only when it changes (a camera switch, a pipeline that refused it).
        if let still = report?.stillStream, still != reportLog.stillStream {
            if still.granted { log.notice("\(still): the press photo") } else { log.notice("\(still)") }
            reportLog.stillStream = still
        }
        logLacking(report?.lacking ?? [])
    }

    /// After a still: its granted size, when first known or changed, and any
    /// control the still's start lacked that video did not.
    func logStillReport() {
        guard let report = camera?.controlReport else { return }
        if let size = report.stillSize, size != reportLog.stillSize {
            log.notice("stills are \(Self.granted(size, of: cameraOpening.stillSizes))")
            reportLog.stillSize = size
        }
        logLacking(report.lacking)
    }

    /// "1280x720 (preference 2 of 2; not granted: 1920x1080)", or that the
    /// camera granted none of the list.
    static func granted(_ size: PixelSize, of asked: [PixelSize]) -> String {
        let list = asked.map(\.description).joined(separator: ", ")
        guard let entry = SizePreference.entry(of: size, in: asked) else {
            return "\(size) (asked \(list): none granted, the camera adjusted to this)"
        }
        if asked.count == 1 { return "\(size) (as asked)" }
        let refused = asked[..<entry].map(\.description).joined(separator: ", ")
        return "\(size) (preference \(entry + 1) of \(asked.count)\(refused.isEmpty ? "" : "; not granted: \(refused)"))"
    }

    func logLacking(_ lacking: [LackingControl]) {
        guard lacking != reportLog.lacking else { return }
        let before = reportLog.lacking ?? []
        for l in lacking where !before.contains(l) {
            log.warning("camera control not applied: \(l) (\(l.keys.joined(separator: ", ")))")
        }
        reportLog.lacking = lacking
    }

    /// The `camera` part of `status`.
    /// `cameras`: the board's list, for the index of the camera in use.
    func cameraStatus(cameras: [CameraListing]) -> ServiceStatus.Camera {
        let video = cameraOpening.videoSizes, still = cameraOpening.stillSizes
        guard let camera else {
            return ServiceStatus.Camera(model: "none", asked: cameraControls, lacking: [], videoSize: nil,
                                        stillSize: nil, videoSizesAsked: video, stillSizesAsked: still)
        }
        let r = camera.controlReport
        return ServiceStatus.Camera(
            model: camera.info.model, index: inUseIndex(in: cameras), id: camera.info.id, asked: r.asked,
            lacking: r.lacking, videoSize: r.videoSize, stillSize: r.stillSize,
            videoSizesAsked: video, stillSizesAsked: still,
            videoSizeEntry: r.videoSize.flatMap { SizePreference.entry(of: $0, in: video) },
            stillSizeEntry: r.stillSize.flatMap { SizePreference.entry(of: $0, in: still) },
            sensorHdr: r.sensorHDR, frame: lastMetadata, stillStream: r.stillStream)
    }
}
