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
import ShutterControl
import ShutterCore
import ShutterStorage
import ShutterWeb
import Synchronization

/// shutterd through its control socket, for the connector (shutterd-connector.service):
/// live events from one `events` connection kept open (again after 1 s, doubling to 30 s,
/// when shutterd restarts), requests and `status` each on a connection of its own, and
/// thumbnails read from the card (the connector may read it, not write it).
final class ControlSocketLink: CameraLink {
    private let path: String
    private let storage: Storage
    private let clock = SystemClock()
    private let log = Log("shutter.connector")
    /// The events as shutterd sends them, to this process's watchers.
    private let events = LiveEvents()
    private let closed = Atomic<Bool>(false)
    /// Requests in the order they came (a hold's waits for its clip).
    private let requests = DispatchQueue(label: "shutter.connector.requests")
    private let statuses = DispatchQueue(label: "shutter.connector.status")

    init(socketPath: String, storage: Storage) {
        path = socketPath
        self.storage = storage
        PlainThread.start(name: "connector-events") { [self] in followEvents() }
    }

    var now: MonotonicTime { clock.now() }
    func watch(_ deliver: @escaping @Sendable (LiveEvent) -> Void) -> Int { events.watch(deliver) }
    func stopWatching(_ id: Int) { events.stopWatching(id) }
    func thumbnail(_ number: DCFNumber) -> Data? { storage.thumbnail(number) }

    func status() async -> ServiceStatus? {
        let path = self.path
        return await Blocking.run(on: statuses) { try? ControlClient.send(ControlRequest(cmd: "status"), to: path).0.status }
    }

    func ask(_ command: ServiceCommand, line: [UInt8], _ reply: Reply) {
        let path = self.path
        var payload = line
        if payload.last != 0x0A { payload.append(0x0A) }
        requests.async { [payload] in
            do {
                reply.send(try ControlClient.send(line: payload, to: path).0)
            } catch {
                reply.send(.failure("shutterd did not answer on its control socket \(path) (\(error)); is shutterd.service running?"))
            }
        }
    }

    func report(part: String, trouble: String) {
        var r = ControlRequest(cmd: "trouble")
        r.name = "\(part) (shutterd-connector)"
        r.value = .string(trouble)
        let path = self.path, log = self.log
        requests.async { [r] in
            if (try? ControlClient.send(r, to: path)) == nil { log.debug("connector: shutterd not told: \(trouble)") }
        }
    }

    func report(upload: UploadReport, events: [LiveEvent]) {
        var r = ControlRequest(cmd: "upload-report")
        guard case .object(var o)? = try? PlainJSON.decode(JSONValue.self, from: PlainJSON.encode(upload)) else { return }
        o["events"] = .array(events.map { e in
            var d = e.data
            d["event"] = .string(e.type)
            return .object(d)
        })
        r.value = .object(o)
        let path = self.path, log = self.log
        requests.async { [r] in
            if (try? ControlClient.send(r, to: path)) == nil { log.debug("connector: shutterd not told of the uploads") }
        }
    }

    /// No more events (the connector stops); the thread ends at shutterd's next line or
    /// within the wait between tries.
    /// What was queued for shutterd (a report of a part that could not start) is sent first.
    func close() {
        requests.sync {}
        closed.store(true, ordering: .sequentiallyConsistent)
    }

    private func followEvents() {
        var wait = 1
        var said = false
        while !closed.load(ordering: .sequentiallyConsistent) {
            do {
                try ControlClient.stream(ControlRequest(cmd: "events"), to: path) { [self] bytes in
                    if said { log.notice("connector: following shutterd's events again") }
                    said = false
                    wait = 1
                    if case .object(var o)? = try? JSONParser.parse(String(decoding: bytes, as: UTF8.self)).value,
                       case .string(let type)? = o.removeValue(forKey: "event") {
                        events.publish(LiveEvent(type: type, data: o))
                    }
                    return !closed.load(ordering: .sequentiallyConsistent)
                }
            } catch {
                if !said { log.warning("connector: no events from shutterd on \(path) (\(error)); trying again, every \(30) s at most") }
                said = true
            }
            var slept = 0
            while slept < wait, !closed.load(ordering: .sequentiallyConsistent) { sleep(1); slept += 1 }
            wait = min(wait * 2, 30)
        }
    }
}
