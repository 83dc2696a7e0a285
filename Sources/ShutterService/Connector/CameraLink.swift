// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterControl
import ShutterCore
import ShutterStorage
import ShutterWeb

/// What a part that speaks for the camera to the outside (MQTT) needs of the service:
/// its live events, its status, its answer to a request, a file's thumbnail. In shutterd
/// the service itself (`ServiceLink`); in shutterd-connector.service, which may reach the
/// network while shutterd may not, shutterd through its control socket (`ControlSocketLink`).
protocol CameraLink: Sendable {
    var now: MonotonicTime { get }
    /// Delivers every live event (the current state first) until `stopWatching`; the
    /// closure only takes the event (it runs under the events' lock).
    func watch(_ deliver: @escaping @Sendable (LiveEvent) -> Void) -> Int
    func stopWatching(_ id: Int)
    /// nil when the service cannot be asked now.
    func status() async -> ServiceStatus?
    /// A request as the control socket takes it: `command` decoded from `line`.
    func ask(_ command: ServiceCommand, line: [UInt8], _ reply: Reply)
    func thumbnail(_ number: DCFNumber) -> Data?
    /// What went wrong with `part`, for `status.lastError` (as logged: rate-limited there).
    func report(part: String, trouble: String)
    /// The upload queue as it is (`status.upload`), and what happened since the last report
    /// (live events to publish: "uploaded", "upload-failed").
    func report(upload: UploadReport, events: [LiveEvent])
}

/// The service in this process.
struct ServiceLink: CameraLink {
    let service: CameraService

    var now: MonotonicTime { service.ctx.now }
    func watch(_ deliver: @escaping @Sendable (LiveEvent) -> Void) -> Int { service.events.watch(deliver) }
    func stopWatching(_ id: Int) { service.events.stopWatching(id) }
    func status() async -> ServiceStatus? { await service.status() }
    func ask(_ command: ServiceCommand, line: [UInt8], _ reply: Reply) { service.post(.request(command, reply)) }
    func thumbnail(_ number: DCFNumber) -> Data? { service.storage.thumbnail(number) }
    func report(part: String, trouble: String) { service.post(.partTrouble(name: part, what: trouble)) }
    func report(upload: UploadReport, events: [LiveEvent]) { service.post(.uploadReport(upload, events: events)) }
}
