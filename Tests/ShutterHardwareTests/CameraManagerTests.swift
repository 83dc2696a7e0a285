// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import CLibcameraShim
import Dispatch
import XCTest
@testable import ShutterHardware

/// Runs the real libcamera (0.0.3 here) on a machine without any camera.
final class CameraManagerTests: XCTestCase {
    /// These assert what happens without a camera: on a machine with one (a Pi, the
    /// emulated-hardware VM) they would fail for the wrong reason.
    override func setUpWithError() throws {
        if let found = try? LibcameraCameraManager().cameras(), !found.isEmpty {
            throw XCTSkip("this machine has a camera (\(found.count)); the no-camera checks do not apply")
        }
    }

    func testManagerStartsAndEnumeratesZeroCameras() throws {
        let manager = try LibcameraCameraManager()
        XCTAssertEqual(try manager.cameras(), [])
        // The running library reports the version the shim was compiled against.
        XCTAssertFalse(LibcameraCameraManager.headerVersion.isEmpty)
        XCTAssertTrue(manager.libraryVersion.contains(LibcameraCameraManager.headerVersion),
                      "library \(manager.libraryVersion) vs headers \(LibcameraCameraManager.headerVersion)")
    }

    func testOpenByIndexGivesNoDeviceNamingWhatWasFound() throws {
        let manager = try LibcameraCameraManager()
        do {
            _ = try manager.open(.index(0))
            XCTFail("opened a camera on a machine without one")
        } catch let error as CameraError {
            XCTAssertEqual(error.code, .noDevice)
            XCTAssertTrue(error.message.contains("no camera found by libcamera"), error.message)
            XCTAssertTrue(error.message.contains(manager.libraryVersion), error.message)
            XCTAssertTrue(error.message.contains("camera #0"), error.message)
            for hint in ["ribbon cable", "camera_auto_detect", "dtoverlay", "/dev/media*", "/dev/video*",
                         "Device nodes:"] {
                XCTAssertTrue(error.message.contains(hint), "missing \(hint): \(error.message)")
            }
        }
    }

    func testOpenByModelAndLocationGiveNoDevice() throws {
        let manager = try LibcameraCameraManager()
        for (selector, words) in [(CameraSelector.model("imx708"), "model \"imx708\""),
                                  (.location(.back), "the back camera"),
                                  (.first, "the first camera"),
                                  (.idContaining("i2c@88000"), "i2c@88000")] {
            XCTAssertThrowsError(try manager.open(selector)) { error in
                let e = error as? CameraError
                XCTAssertEqual(e?.code, .noDevice)
                XCTAssertTrue(e?.message.contains(words) == true, e?.message ?? "\(error)")
            }
        }
    }

    func testManagerStartStopTwiceAndNested() throws {
        // Start, stop, start again: a second CameraManager in one process.
        for _ in 0..<2 {
            let manager = try LibcameraCameraManager()
            XCTAssertEqual(try manager.cameras().count, 0)
        }
        // Two Swift managers alive at once share the one libcamera CameraManager.
        let a = try LibcameraCameraManager()
        let b = try LibcameraCameraManager()
        XCTAssertEqual(try a.cameras().count, 0)
        XCTAssertEqual(try b.cameras().count, 0)
        XCTAssertEqual(try enumerateLibcameraCameras().count, 0)
    }

    func testManagerFromManyThreadsAtOnce() {
        // The shim's reference count is the only thing between these and
        // libcamera's fatal "Multiple CameraManager objects" abort.
        let failures = ManagedCounter()
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                let m = try LibcameraCameraManager()
                if try m.cameras().count != 0 { failures.add() }
            } catch {
                failures.add()
            }
        }
        XCTAssertEqual(failures.value, 0)
    }

    func testShimRejectsBadArgumentsWithoutCrashing() {
        var raw: OpaquePointer?
        XCTAssertEqual(shc_manager_acquire(nil), -EINVAL)
        XCTAssertEqual(shc_manager_acquire(&raw), 0)
        defer { shc_manager_release(raw) }
        // One CameraManager per process: a second acquire shares the first.
        var again: OpaquePointer?
        XCTAssertEqual(shc_manager_acquire(&again), 0)
        XCTAssertEqual(again, raw)
        shc_manager_release(again)
        XCTAssertEqual(shc_manager_cameras(raw, nil, 0), 0)
        XCTAssertEqual(shc_manager_cameras(raw, nil, 4), -EINVAL)
        var cam: OpaquePointer?
        XCTAssertEqual(shc_camera_open(raw, "/no/such/camera", &cam), -ENODEV)
        XCTAssertNil(cam)
        XCTAssertEqual(shc_camera_open(raw, nil, &cam), -EINVAL)
        XCTAssertEqual(shc_camera_start(nil), -EINVAL)
        XCTAssertEqual(shc_camera_stop(nil), -EINVAL)
        XCTAssertEqual(shc_camera_next_frame(nil, nil), -EINVAL)
        XCTAssertEqual(shc_camera_configure(nil, nil, nil), -EINVAL)
        XCTAssertEqual(shc_camera_configure_pair(nil, nil, nil, nil, nil, nil), -EINVAL)
        XCTAssertEqual(shc_camera_sensor_sizes(nil, nil, 0), -EINVAL)
        XCTAssertEqual(shc_camera_af_trigger(nil), Int64(-EINVAL))
        XCTAssertEqual(shc_camera_has_control(nil, "AfMode"), 0)
        shc_frame_release(nil)
        shc_camera_close(nil)
        shc_manager_release(nil)
    }
}

/// A thread-safe counter for the concurrency test.
final class ManagedCounter: @unchecked Sendable {
    // Unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
