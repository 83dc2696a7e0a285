// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// printf formatting (the C library's vsnprintf) for what the service printed with
/// Foundation's `String(format:)`: numbers only (%d, %ld, %f, %.3f, %02d...), where the
/// two print the same characters (C locale digits and point; tested against Foundation).
/// No %@ and no %s: those are Foundation's objects and C pointers.
public func cFormat(_ format: String, _ arguments: CVarArg...) -> String {
    withVaList(arguments) { args in
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = vsnprintf(&buffer, buffer.count, format, args)
        if needed < 0 { return "" }
        if Int(needed) < buffer.count { return String(decoding: buffer.prefix(Int(needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return withVaList(arguments) { again in
            var big = [CChar](repeating: 0, count: Int(needed) + 1)
            _ = vsnprintf(&big, big.count, format, again)
            return String(decoding: big.prefix(Int(needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
