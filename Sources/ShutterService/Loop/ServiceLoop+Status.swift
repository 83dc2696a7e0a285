// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore
import ShutterMedia
import ShutterStorage

/// `status`: a value assembled from the parts when asked, not fields kept in sync.
extension ServiceLoop {
    /// Status, assembled from the parts when asked.
    var status: ServiceStatus {
        var counters = ServiceStatus.Counters()
        counters.photos = photo.photos
        counters.clips = clip.clips
        counters.droppedFrames = control.inUse.camera?.droppedFrames ?? 0
        counters.audioOverruns = ctx.roles.microphone?.overruns ?? 0
        counters.errors = journal.errors
        counters.cameraRestarts = health.cameraRestarts
        counters.refusedPresses = journal.refusedPresses
        counters.droppedButtonEdges = ctx.roles.button?.droppedEdges ?? 0
        var status = ServiceStatus(
            state: Self.describe(machine.state), board: ctx.roles.name, camera: control.view.status,
            leds: leds.levels, flashMode: control.asked.lights.flashMode.rawValue, counters: counters, freeBytes: health.freeBytes,
            storageRoot: ctx.storage.root, lastError: journal.lastError, lastFiles: journal.lastFiles,
            uptimeSeconds: Double((ctx.now - ctx.startedAt).nanoseconds) / 1e9,
            lastPhoto: photo.report, preroll: clip.recorder.prerollReport)
        status.preview = preview.map { t in let f = t.figures; return .init(encoded: f.encoded, skipped: f.skipped) }
        status.preview?.live = ctx.video?.counters
        status.torch = control.asked.lights.videoTorch
        status.exposureEv = control.asked.settings.effective.camera.controls.exposure.ev
        status.memory = .init(heapBytes: ProcessMemory.heapInUse, residentBytes: ProcessMemory.resident)
        status.upload = ctx.config.upload.enabled ? journal.upload : nil
        status.interval = interval.enabled ? interval.report(now: ctx.now) : nil
        status.overlay = ctx.overlay.map { o in
            let f = o.figures
            return OverlayReport(timeDrawn: f.trusted, renderedAhead: f.renderedAhead, renderedOnMiss: f.rendered)
        }
        status.timelapse = timelapse.report
        status.triggers = triggers.isEmpty ? nil : triggers.reports()
        if let r = machine.recordingSpan {
            let now = ctx.now
            status.recording = .init(elapsedSeconds: Self.seconds(max(.zero, now - r.from)),
                                     remainingSeconds: Self.seconds(max(.zero, r.end - now)))
        }
        return status
    }

    /// Seconds to a tenth.
    private static func seconds(_ d: Duration) -> Double { (Double(d.nanoseconds) / 1e8).rounded() / 10 }

    static func describe(_ s: CaptureState) -> String {
        switch s {
        case .booting: return "booting"
        case .idle: return "idle"
        case .pressed: return "pressed"
        case .takingPhoto: return "taking-photo"
        case .recording: return "recording"
        case .finalising: return "finalising"
        case .cameraUnavailable: return "camera-unavailable"
        case .storageUnavailable(let code): return "storage-unavailable-\(code.rawValue)"
        case .shutdownCountdown: return "shutdown-countdown"
        case .shuttingDown: return "shutting-down"
        case .poweredOff: return "powered-off"
        }
    }
}
