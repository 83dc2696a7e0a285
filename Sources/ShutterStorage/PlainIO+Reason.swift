// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

// Here, not in ShutterCore: FoundationEssentials' error types would bring its Data and
// coding into the static shutterctl, which links ShutterCore but not ShutterStorage.
extension PlainIO {
    /// An error's reason for a log line without Foundation's `localizedDescription`
    /// (full Foundation only): a file error's system reason ("No such file or directory",
    /// from the POSIX error FoundationEssentials keeps under it), else the error's own text.
    public static func reason(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let cocoa = error as? CocoaError, let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        if let failure = error as? PlainIO.Failure { return failure.description }
        return "\(error)"
    }
}
