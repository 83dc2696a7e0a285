// SPDX-License-Identifier: BSD-2-Clause
/// The one shape of the service's errors: a small code the service acts on
/// (the next state, an LED pattern, a retry or not), a message that tells a
/// person what to do, and the errno of the failed call underneath, when there
/// was one. An error type is its codes and what it adds:
/// `CameraError` is `CodedError<CameraErrorCode>`, `CaptureError.ledCode` an
/// extension of `CodedError<CaptureErrorCode>`; `CameraError.Code` names its codes.
public struct CodedError<Codes: ErrorCode>: Error, Equatable, Sendable, CustomStringConvertible {
    /// `CameraError.Code.busy`.
    public typealias Code = Codes

    public var code: Code
    /// What is wrong and what to do about it.
    public var message: String
    /// The errno of the failed system or library call, when there was one (positive).
    public var errno: Int32?

    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    /// "camera busy: ...": the codes' subject, the code and the message.
    public var description: String {
        guard let subject = Code.subject else { return "\(code.rawValue): \(message)" }
        return "\(subject) \(code.rawValue): \(message)"
    }
}

/// The codes of one kind of error (`CodedError`), as they appear in its description.
public protocol ErrorCode: RawRepresentable, Equatable, Sendable where RawValue == String {
    /// The word the description starts with ("camera", "storage"); nil for none.
    static var subject: String? { get }
}

extension ErrorCode {
    public static var subject: String? { nil }
}
