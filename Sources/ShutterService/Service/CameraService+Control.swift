import Foundation
import ShutterCore
import ShutterStorage
import ShutterSim

/// Requests from the control socket, the terminal and signals. Each request
/// gets an id when it arrives; its reply names exactly the files it caused, or
/// is a refusal saying what is in progress (README "Requests").
extension CameraService {
    public func handle(_ request: ControlRequest) async -> ControlReply {
        switch request.cmd {
        case "status":
            return ControlReply(ok: true, status: await status())
        case "press":
            return press()
        case "release":
            return await release()
        case "tap", "photo":
            return await ask(.photo, bound: .seconds(45))
        case "hold":
            guard let seconds = request.seconds, seconds > 0, seconds <= 3600 else {
                return .failure("hold needs \"seconds\" between 0 and 3600, e.g. {\"cmd\":\"hold\",\"seconds\":3}")
            }
            let held = Duration.milliseconds(Int64(seconds * 1000))
            return await ask(.recordStart(stopAfter: held), bound: held + .seconds(45))
        case "record":
            switch request.action {
            case "start": return await ask(.recordStart(stopAfter: nil), bound: .seconds(45), answerAtStart: true)
            case "stop": return await ask(.recordStop, bound: .seconds(45))
            default: return .failure("record needs \"action\": \"start\" or \"stop\"")
            }
        case "sim":
            return await simCommand(request)
        case "set":
            return await setSetting(request)
        case "get":
            return getSetting(request)
        case "reset":
            return await resetSetting(request)
        case "focus":
            return await focus(request)
        case "camera":
            return await cameraCommand(request)
        default:
            return .failure("unknown command \"\(request.cmd)\"")
        }
    }

    /// Gives the request an id, hands it to the state machine and waits for its
    /// answer: the files of the capture it became, or the reason it was refused.
    /// `bound`: the longest a client waits (its capture's own time plus the
    /// one capture it may queue behind; the machine's own timeouts come first).
    private func ask(_ command: CaptureCommand, bound: Duration, answerAtStart: Bool = false) async -> ControlReply {
        if stopping { return .failure("shutterd is stopping") }
        let now = clock.now()
        let id = requests.newRequest(at: now)
        let answer = await withCheckedContinuation { (c: CheckedContinuation<RequestBook.Answer, Never>) in
            requests.wait(.request(id), deadline: now + bound, c)
            if answerAtStart { requests.answerWhenStarted(.request(id)) }
            apply(machine.handle(.command(command, id), at: now))
        }
        return Self.reply(answer)
    }

    /// Signals and terminal keys: the same requests, nobody waiting for the answer.
    func submit(_ command: CaptureCommand) -> RequestID {
        let now = clock.now()
        let id = requests.newRequest(at: now)
        apply(machine.handle(.command(command, id), at: now))
        return id
    }

    /// `press` / `release`: a button press of the client's own, fed to the same
    /// recognizer as the physical button's edges, dated exactly, so the release
    /// can be answered with what this press became (or that it made nothing).
    private func press() -> ControlReply {
        guard clientPress == nil else { return .failure("the button is already pressed by a client; release it first") }
        let t = clock.now()
        clientPress = t
        edge(ButtonEdge(pressed: true, time: t))
        return ControlReply(ok: true)
    }

    private func release() async -> ControlReply {
        guard let p = clientPress else { return .failure("the button is not pressed by a client (send press first)") }
        clientPress = nil
        let now = clock.now()
        feed(recognizer.advance(to: now))  // the press counts once steady for button.stabilityMs
        guard heldPress == p else {
            edge(ButtonEdge(pressed: false, time: now))
            var r = ControlReply(ok: true, files: [])
            r.note = "released within button.stabilityMs (\(config.button.stabilityMs) ms): not a press"
            return r
        }
        let origin = CaptureOrigin.button(press: p)
        let answer = await withCheckedContinuation { (c: CheckedContinuation<RequestBook.Answer, Never>) in
            requests.wait(origin, deadline: now + .seconds(45), c)
            edge(ButtonEdge(pressed: false, time: now))
        }
        return Self.reply(answer)
    }

    static func reply(_ a: RequestBook.Answer) -> ControlReply {
        switch a {
        case let .files(files, pressToDurableMs, clipStartOffsetMs, photo):
            var r = ControlReply(ok: true, files: files)
            r.pressToDurableMs = pressToDurableMs
            r.clipStartOffsetMs = clipStartOffsetMs
            r.pressToExposureMs = photo?.pressToExposureMs
            r.releaseToDurableMs = photo?.releaseToDurableMs
            r.moment = photo?.moment
            return r
        case let .refused(message, busy):
            var r = ControlReply.failure(message)
            r.busy = busy ? true : nil
            return r
        case .failed(let message):
            return .failure(message)
        case let .done(message, files):
            var r = ControlReply(ok: true, files: files)
            r.note = message
            return r
        }
    }

    /// The terminal's `r` key and SIGUSR2.
    func toggleRecording() {
        _ = submit(isRecording ? .recordStop : .recordStart(stopAfter: nil))
    }

    private func simCommand(_ r: ControlRequest) async -> ControlReply {
        guard let sim = roles.sim else { return .failure("sim commands need the simulated board (--board sim)") }
        if let f = r.fault {
            guard let fault = SimCamera.Fault(rawValue: f) else {
                return .failure("unknown fault \"\(f)\" (one of: \(SimCamera.Fault.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            (camera as? SimCamera ?? sim.camera).fault = fault
            log.notice("sim: camera fault \(fault.rawValue)")
        }
        if let lux = r.lux { for c in sim.cameras { c.lux = lux } }
        if let failing = r.ledFailing {
            sim.statusLED.failing = failing
            sim.flashLED.failing = failing
        }
        return ControlReply(ok: true, status: await status())
    }

    // MARK: Status

    public func status() async -> ServiceStatus {
        var leds: [String: ServiceStatus.LEDState] = [:]
        // What the LED drivers last wrote: the same on the real and the simulated board.
        if let d = statusDriver { leds["status"] = .init(on: await d.level ?? false, pattern: statusPatternName) }
        if let d = flashDriver { leds["flash"] = .init(on: await d.level ?? false, pattern: flashPatternName) }
        counters.audioOverruns = roles.microphone?.overruns ?? 0
        let cameras = camera == nil ? [] : ((try? await roles.listCameras()) ?? [])
        var status = ServiceStatus(
            state: Self.describe(machine.state), board: roles.name, camera: cameraStatus(cameras: cameras),
            leds: leds, flashMode: machine.flashMode.rawValue, counters: counters, freeBytes: freeBytes,
            storageRoot: storage.root, lastError: lastError, lastFiles: lastFiles,
            uptimeSeconds: Double((clock.now() - startedAt).nanoseconds) / 1e9,
            lastPhoto: lastPhoto.map { p in
                var p = p
                p.videoGapMs = videoGap.exactMilliseconds
                return p
            },
            preroll: clips.prerollReport)
        status.preview = previewTap.map { t in let f = t.figures; return .init(encoded: f.encoded, skipped: f.skipped) }
        return status
    }

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

extension CameraService {
    /// The terminal's space bar: the simulated button's line itself.
    func terminalButton(pressed: Bool) {
        if let sim = roles.sim { sim.button.set(pressed: pressed) } else { edge(ButtonEdge(pressed: pressed, time: clock.now())) }
    }
}
