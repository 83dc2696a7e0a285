// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterWeb
import XCTest

/// `shutterctl web-password --stdin`, as a script sets the page's password: the real
/// binary prints an Argon2id hash that verifies the password and no other; a short
/// password, a NUL in it and no terminal are refused with what to do.
final class WebPasswordCommandTests: XCTestCase {
    private func webPassword(_ args: [String], stdin: String?) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterctl")
        p.arguments = ["web-password"] + args
        let input = Pipe(), out = Pipe(), err = Pipe()
        p.standardInput = stdin == nil ? FileHandle.nullDevice : input
        p.standardOutput = out
        p.standardError = err
        try p.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func testStdinPrintsAnArgon2idHashOfThatPassword() throws {
        let (code, out, err) = try webPassword(["--stdin"], stdin: "correct horse battery\n")
        XCTAssertEqual(code, 0, err)
        let hash = out.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(hash.hasPrefix("$argon2id$"), hash)
        XCTAssertFalse(out.contains("correct horse"), "the password itself is never printed")
        XCTAssertTrue(PasswordHash.verify("correct horse battery", against: hash))
        XCTAssertFalse(PasswordHash.verify("correct horse battery!", against: hash))
    }

    func testAShortPasswordOrNoTerminalIsRefusedWithWhatToDo() throws {
        let (short, shortOut, shortErr) = try webPassword(["--stdin"], stdin: "abc\n")
        XCTAssertNotEqual(short, 0)
        XCTAssertEqual(shortOut, "", "nothing printed")
        XCTAssertTrue(shortErr.contains("at least"), shortErr)
        let (nul, nulOut, nulErr) = try webPassword(["--stdin"], stdin: "correct horse\u{0}battery\n")
        XCTAssertNotEqual(nul, 0)
        XCTAssertEqual(nulOut, "", "nothing printed")
        XCTAssertTrue(nulErr.contains("cannot contain a NUL"), nulErr)
        let (noTTY, _, noTTYErr) = try webPassword([], stdin: nil)
        XCTAssertNotEqual(noTTY, 0)
        XCTAssertTrue(noTTYErr.contains("--stdin"), noTTYErr)
    }
}
