/// What can go wrong with a camera, real or simulated. The service's policy
/// (retry quietly, restart with backoff, give up to systemd) keys off `code`.
public struct CameraError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No camera found (or the chosen one is absent): retried quietly.
        case noDevice
        /// Frames stopped arriving, or a request completed cancelled mid-run.
        case timeout
        /// The camera refused a configuration or control.
        case rejected
        /// It was there and went away (cable, USB).
        case disconnected
        /// Anything else the driver reported.
        case failed
    }

    public var code: Code
    /// A human message that says what to do.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
