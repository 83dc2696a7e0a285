import Foundation
import ShutterCore
import ShutterStorage
import ShutterMedia

/// The card: made ready at start, probed every few seconds, and what READY=1
/// and STATUS= say about it. Every file-system call runs on `storageQueue`.
extension CameraService {
    private static let storageQueue = DispatchQueue(label: "shutter.storage")

    /// Creates the root (unless it must be a mount point), removes temp clips a
    /// power cut left, and cuts a clip open at the cut back to its last whole fragment.
    func prepareStorage() async {
        let storage = self.storage, log = self.log, create = !config.storage.requireMountPoint
        await Blocking.run(on: Self.storageQueue) {
            if create {
                // A plain directory (make run, a test, a card mounted at boot): create it.
                // With requireMountPoint the service waits for the card instead.
                try? FileManager.default.createDirectory(atPath: storage.root, withIntermediateDirectories: true)
            }
            ClipFiles.removeLeftovers(in: storage.root)
            Self.recoverLastClip(in: storage.dcim, log: log)
        }
    }

    /// A clip open when the power went (or the process was killed inside a write)
    /// may end in a partial fragment: cut it back to its last whole one.
    private static func recoverLastClip(in dcim: String, log: Log) {
        guard let e = FileManager.default.enumerator(atPath: dcim) else { return }
        let clips = e.compactMap { $0 as? String }.filter { $0.hasSuffix(".MP4") }.sorted()
        guard let last = clips.last else { return }
        let path = (dcim as NSString).appendingPathComponent(last)
        // A name reserved just before a crash, never written: nothing to keep (its
        // number stays used, the counter is ahead of it).
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size == 0 {
            unlink(path)
            log.notice("removed \(path): an empty clip left by a crash")
            return
        }
        do {
            let cut = try FragmentedMP4Recovery.truncateToLastWholeFragment(path: path)
            if cut > 0 { log.notice("repaired \(path): cut \(cut) bytes of an unfinished fragment") }
        } catch {
            log.warning("could not check \(path) for an unfinished fragment: \(error)")
        }
    }

    func probeStorage() async {
        let storage = self.storage
        let result: Result<FileSystemSpace, StorageError> = await Blocking.run(on: Self.storageQueue) {
            do {
                // Healthy means a photo fits too: a full card keeps its LED code
                // until space is freed (with delete-oldest-videos this makes room).
                _ = try storage.ensureSpace(for: .photo)
                return .success(try storage.checkHealth())
            } catch let e as StorageError { return .failure(e) } catch {
                return .failure(StorageError(.ioError, "\(error)"))
            }
        }
        storageProbed(result)
    }

    private func storageProbed(_ result: Result<FileSystemSpace, StorageError>) {
        let now = clock.now()
        storageProbed = true
        switch result {
        case .success(let space):
            freeBytes = space.availableBytes
            watchdog.storageOK(at: now)
            if case .storageUnavailable = machine.state { apply(machine.handle(.storageRestored, at: now)) }
            becomeReadyIfPossible()
            if isReady { publishStatus(readyStatusLine()) }
        case .failure(let e):
            watchdog.storageFailed(at: now)
            if lastError != e.message { log.warning("storage: \(e.message)") }
            lastError = e.message
            if case .storageUnavailable = machine.state {} else {
                apply(machine.handle(.fault(CaptureFault(e)), at: now))
            }
            becomeReadyIfPossible()
            publishStatus("storage problem: \(e.message)")
        }
    }

    func becomeReadyIfPossible() {
        // A full or missing card does not hold READY back: the service is up and
        // shows the storage code; it recovers when the card does.
        guard !isReady, cameraHealthy, storageProbed else { return }
        isReady = true
        apply(machine.handle(.ready, at: clock.now()))
        let line = readyStatusLine()
        log.notice(line)
        lastStatusLine = line
        hooks.ready(line)
    }

    func readyStatusLine() -> String {
        var s = "ready, \(counters.photos) photo\(counters.photos == 1 ? "" : "s"), \(counters.clips) clip\(counters.clips == 1 ? "" : "s")"
        if let f = freeBytes { s += String(format: ", %.1f GB free", Double(f) / 1e9) }
        return s
    }

    func publishStatus(_ line: String) {
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        hooks.status(line)
    }
}
