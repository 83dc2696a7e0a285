// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterControl

// shutterd's modules hand bytes around as Data; ShutterControl (linked by the static
// shutterctl) uses none of FoundationEssentials' types, so the Data form lives here.
extension ControlCoding {
    /// `line(value)` as Data: one protocol line, newline included.
    public static func encode<T: Encodable>(_ value: T) -> Data { Data(line(value)) }
}
