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
    }

    /// After a camera start: the granted video size and each lacking control.
    func logCameraReport(model: String, restart: Bool) {
        let report = camera?.controlReport
        let size = report?.videoSize
        let shown = !restart || size != reportLog.videoSize
            ? size.map { ", video \($0) (asked \(config.video.width)x\(config.video.height))" } ?? "" : ""
        log.notice("camera \(model) started\(restart ? " again" : "")\(shown)")
        reportLog.videoSize = size
        logLacking(report?.lacking ?? [])
    }

    /// After a still: its granted size, when first known or changed, and any
    /// control the still's start lacked that video did not.
    func logStillReport() {
        guard let report = camera?.controlReport else { return }
        if let size = report.stillSize, size != reportLog.stillSize {
            log.notice("stills are \(size) (asked \(config.still.width)x\(config.still.height))")
            reportLog.stillSize = size
        }
        logLacking(report.lacking)
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
    func cameraStatus() -> ServiceStatus.Camera {
        guard let camera else {
            return ServiceStatus.Camera(model: "none", asked: cameraControls, lacking: [], videoSize: nil,
                                        stillSize: nil)
        }
        let r = camera.controlReport
        return ServiceStatus.Camera(model: camera.info.model, asked: r.asked, lacking: r.lacking,
                                    videoSize: r.videoSize, stillSize: r.stillSize, frame: lastMetadata)
    }
}
