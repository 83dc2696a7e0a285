// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization
import XCTest
@testable import ShutterService

/// The parts' policy (CameraService.supervise): a part whose start fails or whose run ends
/// is started again after 1 s, doubling; the camera never waits for it; a part that is off
/// is never started again; stopping the service is not a failure.
final class ServicePartPolicyTests: XCTestCase {
    /// Fails its first `failing` starts; then each run lasts `runFor` on the service's clock.
    final class FlakyPart: ServicePart {
        let clock: ManualClock
        let failing: Int
        let runFor: Duration
        let record = Mutex<(starts: [MonotonicTime], stops: Int)>(([], 0))
        init(clock: ManualClock, failing: Int, runFor: Duration) {
            self.clock = clock
            self.failing = failing
            self.runFor = runFor
        }
        var name: String { "the flaky part" }
        var starts: [MonotonicTime] { record.withLock { $0.starts } }
        func start(_ service: CameraService) -> PartStart {
            let n = record.withLock { r in r.starts.append(clock.now()); return r.starts.count }
            return n <= failing ? .failed("port 1 is taken (a test)") : .running
        }
        func run(_ service: CameraService) async {
            try? await clock.sleep(until: clock.now() + runFor)
        }
        func stop() { record.withLock { $0.stops += 1 } }
    }

    final class OffPart: ServicePart {
        let count = Mutex(0)
        var name: String { "the part that is off" }
        func start(_ service: CameraService) -> PartStart {
            count.withLock { $0 += 1 }
            return .off
        }
        func stop() {}
    }

    func testAFailedStartAndARunThatEndsAreStartedAgainWithBackoffWhileTheCameraWorks() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let flaky = FlakyPart(clock: clock, failing: 1, runFor: .seconds(3))
        let off = OffPart()
        let rig = try await InProcessRig.start(self, clock: clock, parts: [flaky, off])
        // start 1 fails; 1 s later start 2 runs 3 s and ends; 2 s later start 3; 4 s after its end, start 4.
        try await rig.advance(until: "four starts", limit: .seconds(30)) { flaky.starts.count >= 4 }
        let t = flaky.starts
        let gaps = zip(t.dropFirst(), t).map { Double(($0 - $1).nanoseconds) / 1e9 }
        print("part starts: gaps \(gaps.map { String($0) }.joined(separator: ", ")) s (expected 1, 5, 7)")
        XCTAssertEqual(gaps[0], 1, accuracy: 0.05, "a failed start is tried again after 1 s")
        XCTAssertEqual(gaps[1], 3 + 2, accuracy: 0.05, "a run that ended (3 s) is started again after 2 s")
        XCTAssertEqual(gaps[2], 3 + 4, accuracy: 0.05, "the backoff doubles")
        XCTAssertEqual(flaky.record.withLock { $0.stops }, 2, "stopped before each start again after a run")
        XCTAssertEqual(off.count.withLock { $0 }, 1, "a part that is off is not started again")
        let photo = try await rig.photo()
        XCTAssertTrue(FileManager.default.fileExists(atPath: photo), "the camera works meanwhile")
        let log = rig.log.text
        XCTAssertTrue(log.contains("the flaky part did not start: port 1 is taken (a test); trying again in 1 s"), log)
        XCTAssertTrue(log.contains("the flaky part stopped by itself; starting it again in 2 s"), log)
        let before = flaky.starts.count
        let code = try await rig.stop()
        XCTAssertEqual(code, 0)
        XCTAssertEqual(flaky.starts.count, before, "stopping the service starts nothing again")
    }
}
