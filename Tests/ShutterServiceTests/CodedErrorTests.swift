// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
import ShutterMedia
import ShutterStorage
@testable import ShutterService

/// The error types share one shape (`CodedError`): each states only its codes and the
/// word its description starts with, and reads as it did when each was a struct of its own
/// ("camera busy: ...", "busy: ..." for the capture and photo errors).
final class CodedErrorTests: XCTestCase {
    func testEachErrorTypeDescribesItselfAsBefore() {
        XCTAssertEqual(CaptureError(.storageFull, "free some space").description, "storageFull: free some space")
        XCTAssertEqual(MediaError(.noSpace, "nothing was written").description, "noSpace: nothing was written")
        XCTAssertEqual(CameraError(.busy, "stop rpicam-vid", errno: 16).description, "camera busy: stop rpicam-vid")
        XCTAssertEqual(StorageError(.readOnly, "check the lock switch").description,
                       "storage readOnly: check the lock switch")
        XCTAssertEqual(RecordingError(.noSpace, "the card is full", errno: 28).description,
                       "recording noSpace: the card is full")
        XCTAssertEqual(SystemdNotifyError(.sendFailed, "nobody listens").description,
                       "systemd notify sendFailed: nobody listens")
        XCTAssertEqual(PowerOffError(.refused, "polkit said no").description, "power-off refused: polkit said no")
    }

    func testTheCodesAndFactsAreEachTypesOwn() {
        let e = CameraError(.system, "x", errno: 5)
        XCTAssertEqual(e.errno, 5)
        XCTAssertNil(CameraError(.system, "x").errno)
        XCTAssertEqual(e, CameraError(.system, "x", errno: 5))
        XCTAssertNotEqual(e, CameraError(.system, "x", errno: 6))
        let code: CaptureError.Code = .encoder
        XCTAssertEqual(CaptureError(code, "y").ledCode, .encoderError)
        XCTAssertEqual(CaptureError(StorageError(.full, "z")).code, .storageFull)
        XCTAssertFalse((StorageError(.full, "z") as any Error) is CaptureError, "distinct types")
        XCTAssertTrue(RecordingError(.ioError, "w", errno: 122).isNoSpace, "EDQUOT is full")
    }
}
