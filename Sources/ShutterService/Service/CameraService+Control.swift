import Foundation
import ShutterCore
import ShutterSim

/// The control socket's and the signals' view of the service.
extension CameraService {
    public func handle(_ request: ControlRequest) async -> ControlReply {
        switch request.cmd {
        case "status":
            return ControlReply(ok: true, status: status())
        case "press":
            setButton(pressed: true)
            return ControlReply(ok: true)
        case "release":
            setButton(pressed: false)
            return ControlReply(ok: true)
        case "tap":
            let press = Duration.milliseconds(max(100, Int64(config.button.stabilityMs) * 3))
            return await waitForFiles(after: clock.now(), timeout: .seconds(30)) { service in
                await service.setButton(pressed: true)
                try? await service.clock.sleep(for: press)
                await service.setButton(pressed: false)
            }
        case "hold":
            guard let seconds = request.seconds, seconds > 0, seconds <= 3600 else {
                return .failure("hold needs \"seconds\" between 0 and 3600, e.g. {\"cmd\":\"hold\",\"seconds\":3}")
            }
            let held = Duration.milliseconds(Int64(seconds * 1000))
            return await waitForFiles(after: clock.now(), timeout: held + .seconds(60)) { service in
                await service.setButton(pressed: true)
                try? await service.clock.sleep(for: held)
                await service.setButton(pressed: false)
            }
        case "photo":
            return await waitForFiles(after: clock.now(), timeout: .seconds(30)) { await $0.command(.photo) }
        case "record":
            switch request.action {
            case "start":
                command(.recordStart)
                return ControlReply(ok: true)
            case "stop":
                let t0 = clock.now() - .seconds(Int64(config.video.maxSeconds) + 5)
                guard clip?.id != nil else {
                    command(.recordStop)
                    return ControlReply(ok: true)
                }
                return await waitForFiles(after: t0, timeout: .seconds(60)) { await $0.command(.recordStop) }
            default:
                return .failure("record needs \"action\": \"start\" or \"stop\"")
            }
        case "sim":
            return simCommand(request)
        default:
            return .failure("unknown command \"\(request.cmd)\"")
        }
    }

    func command(_ c: CaptureCommand) {
        apply(machine.handle(.command(c), at: clock.now()))
        scheduleWake()
    }

    /// SIGUSR2: start recording, or stop the one running.
    func toggleRecording() {
        if case .recording = machine.state { command(.recordStop) } else { command(.recordStart) }
    }

    private func simCommand(_ r: ControlRequest) -> ControlReply {
        guard let sim = roles.sim else { return .failure("sim commands need the simulated board (--board sim)") }
        if let f = r.fault {
            guard let fault = SimCamera.Fault(rawValue: f) else {
                return .failure("unknown fault \"\(f)\" (one of: \(SimCamera.Fault.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            sim.camera.fault = fault
            log.notice("sim: camera fault \(fault.rawValue)")
        }
        if let lux = r.lux { sim.camera.lux = lux }
        if let failing = r.ledFailing {
            sim.statusLED.failing = failing
            sim.flashLED.failing = failing
        }
        return ControlReply(ok: true, status: status())
    }

    // MARK: Waiting for files

    /// Registers a wait for the first capture whose press (or command) is at or
    /// after `after`, then runs `action` (which causes it), then waits.
    func waitForFiles(after: MonotonicTime, timeout: Duration,
                      _ action: @escaping @Sendable (CameraService) async -> Void) async -> ControlReply {
        nextWaiterID += 1
        let id = nextWaiterID
        let clock = self.clock
        Task { [weak self] in
            try? await clock.sleep(for: timeout)
            await self?.expireWaiter(id)
        }
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<CaptureOutcome, ServiceFailure>, Never>) in
            waiters.append(Waiter(id: id, after: after, continuation: c))
            Task { await action(self) }
        }
        switch result {
        case .success(let o):
            var r = ControlReply(ok: true, files: o.files)
            r.pressToDurableMs = o.pressToDurableMs
            r.clipStartOffsetMs = o.clipStartOffsetMs
            return r
        case .failure(let e): return .failure(e.message)
        }
    }

    private func expireWaiter(_ id: UInt64) {
        guard let i = waiters.firstIndex(where: { $0.id == id }) else { return }
        let w = waiters.remove(at: i)
        w.continuation.resume(returning: .failure(ServiceFailure(message: "timed out waiting for the file\(lastError.map { " (last error: \($0))" } ?? "")")))
    }

    func resolveWaiters(id: CaptureID, _ files: Result<[String], ServiceFailure>) {
        guard let origin = origins.removeValue(forKey: id) else { return }
        let start = clipStarts.removeValue(forKey: id)
        let result = files.map { paths in
            CaptureOutcome(files: paths, pressToDurableMs: Double((clock.now() - origin).nanoseconds) / 1e6,
                           clipStartOffsetMs: start.map { Double(($0 - origin).nanoseconds) / 1e6 })
        }
        // Each waiter takes the first capture at or after its start.
        var remaining: [Waiter] = []
        for w in waiters {
            if origin >= w.after { w.continuation.resume(returning: result) } else { remaining.append(w) }
        }
        waiters = remaining
    }

    func failWaiters(after: MonotonicTime, _ message: String) {
        var remaining: [Waiter] = []
        for w in waiters {
            if w.after >= after { w.continuation.resume(returning: .failure(ServiceFailure(message: message))) } else { remaining.append(w) }
        }
        waiters = remaining
    }

    // MARK: Status

    public func status() -> ServiceStatus {
        var leds: [String: ServiceStatus.LEDState] = [:]
        if let sim = roles.sim {
            leds["status"] = .init(on: sim.statusLED.isOn, pattern: statusPatternName)
            leds["flash"] = .init(on: sim.flashLED.isOn, pattern: flashPatternName)
        } else {
            if roles.statusLED != nil { leds["status"] = .init(on: false, pattern: statusPatternName) }
            if roles.flashLED != nil { leds["flash"] = .init(on: false, pattern: flashPatternName) }
        }
        return ServiceStatus(
            state: Self.describe(machine.state), board: roles.name, camera: camera?.info.model ?? "none",
            leds: leds, flashMode: machine.flashMode.rawValue, counters: counters, freeBytes: freeBytes,
            storageRoot: storage.root, lastError: lastError, lastFiles: lastFiles,
            uptimeSeconds: (clock.now() - startedAt).seconds)
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

extension Duration {
    var seconds: Double { Double(nanoseconds) / 1e9 }
}
