// SPDX-License-Identifier: BSD-2-Clause
/// Who asked for a capture: the physical button (a press, known by its time)
/// or a request (a socket command, a signal, a web button) with its own id.
/// Every capture action and every refusal names its origin, so the service
/// answers each request with exactly the files it caused.
public enum CaptureOrigin: Hashable, Sendable, CustomStringConvertible {
    case button(press: MonotonicTime)
    case request(RequestID)

    public var description: String {
        switch self {
        case .button(let p): return "press@\(p.nanoseconds / 1_000_000)ms"
        case .request(let r): return "request \(r)"
        }
    }
}

/// Identifies one request from the control socket, a signal or the terminal.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    public var value: UInt64
    public init(_ value: UInt64) { self.value = value }
    public var description: String { "r\(value)" }
}
