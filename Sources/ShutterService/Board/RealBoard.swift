// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterHardware

/// The Raspberry Pi (or emulated-hardware VM): libcamera, libgpiod, ALSA. Each
/// device that is missing is reported with what to check; the camera is opened
/// lazily so the service can wait for it.
extension BoardRoles {
    public static func real(config: ShutterConfig) -> BoardRoles {
        let log = Log("shutter.board")
        let gpioLog = Log("shutter.gpio")
        let labels = config.gpio.chipLabel.isEmpty ? GPIOLineSpec.raspberryPiChipLabels : [config.gpio.chipLabel]
        func line(_ text: String) -> GPIOLineSpec {
            if let offset = UInt32(text) { return GPIOLineSpec(offset: offset, chipLabels: labels) }
            return GPIOLineSpec(name: text, chipLabels: labels)
        }
        func bias(_ b: ShutterConfig.GPIO.Bias) -> GPIOButton.Configuration.Bias {
            switch b {
            case .pullUp: return .pullUp
            case .pullDown: return .pullDown
            case .disabled: return .disabled
            case .asIs: return .asIs
            }
        }
        var button: (any ButtonInput)?
        do {
            button = try GPIOButton(.init(line: line(config.gpio.button), activeLow: config.button.activeLow,
                                          bias: bias(config.gpio.buttonBias), consumer: "shutter-button"),
                                    log: { gpioLog.warning($0) })
        } catch {
            log.error("no shutter button: \(error). Taps and holds work only from `shutterctl` until this is fixed.")
        }
        func led(_ name: String, _ spec: String) -> (any LEDOutput)? {
            guard !spec.isEmpty else { return nil }
            do { return try GPIOLED(name: name, line: line(spec), log: { gpioLog.warning($0) }) } catch {
                log.warning("no \(name) LED: \(error). The camera works without it.")
                return nil
            }
        }
        // Each trigger input's line: one request per line, read as the button's.
        let triggers = config.triggers.inputs.map { t -> TriggerLineRole in
            let label = "The trigger input \"\(t.name)\""
            do {
                let input = try GPIOButton(.init(line: line(t.line), activeLow: t.activeLow, bias: bias(t.bias),
                                                 consumer: "shutter-trigger-\(t.name)", label: label),
                                           log: { gpioLog.warning($0) })
                return TriggerLineRole(name: t.name, input: input)
            } catch {
                log.error("no trigger input \"\(t.name)\": \(error). It does nothing until this is fixed.")
                return TriggerLineRole(name: t.name, input: nil, problem: "\(error)")
            }
        }
        let status = led("status", config.gpio.statusLed)
        let flash = led("flash", config.gpio.flashLed)
        let mic: (any Microphone)? = config.audio.enabled
            ? ALSAMicrophone(device: config.audio.device, log: { Log("shutter.audio").warning($0) }) : nil
        var settings = LibcameraCameraSettings()
        settings.videoSizes = config.videoSizes
        settings.framesPerSecond = Double(config.video.fps)
        settings.stillSizes = config.stillSizes
        settings.stillStreamBesideVideo = config.still.moment == .press
        settings.rotation = config.camera.rotation
        settings.horizontalFlip = config.camera.hflip
        settings.verticalFlip = config.camera.vflip
        settings.autofocusTimeout = .milliseconds(config.camera.afTimeoutMs)
        settings.stillTimeout = .milliseconds(config.camera.stillTimeoutMs)
        settings.controls = config.camera.controls
        let selector: CameraSelector = config.camera.model.isEmpty
            ? .index(config.camera.index) : CameraSelector(parsing: config.camera.model)
        let opener = CameraOpener(selector: selector, settings: settings)
        return BoardRoles(name: config.board.name, openCamera: { try opener.open(index: $0, opening: $1) },
                          listCameras: { try opener.list() }, button: button,
                          microphone: mic, statusLED: status, flashLED: flash, sim: nil,
                          cameraAppliesTransform: true, triggers: triggers)
    }
}

/// Opens the camera through the process's one libcamera manager.
private final class CameraOpener: Sendable {
    let selector: CameraSelector
    let settings: LibcameraCameraSettings

    init(selector: CameraSelector, settings: LibcameraCameraSettings) {
        self.selector = selector
        self.settings = settings
    }

    /// nil: the configured camera; else the one at that index (`shutterctl camera`).
    /// The sensor's HDR mode is set first, as `opening` asks (`SensorHDR`).
    func open(index: Int?, opening: CameraOpening) throws -> any CameraDevice {
        var settings = self.settings
        settings.videoSizes = opening.videoSizes
        settings.stillSizes = opening.stillSizes
        let chosen = index.map(CameraSelector.index) ?? selector
        settings.sensorHDR = try SensorHDR.prepare(on: opening.sensorHDR, selector: chosen)
        return try LibcameraCameraManager().open(chosen, settings: settings)
    }

    func list() throws -> [CameraListing] {
        try LibcameraCameraManager().cameras().enumerated().map {
            CameraListing(index: $0, model: $1.model, id: $1.id)
        }
    }
}
