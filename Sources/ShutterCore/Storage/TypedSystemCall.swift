/// `retryingEINTR` with its error type spelled out, for typed-throws callers.
@discardableResult
func typedEINTR<T: BinaryInteger>(_ call: String, path: String? = nil, _ body: () -> T) throws(SystemError) -> T {
    do {
        return try retryingEINTR(call, path: path, body)
    } catch let e as SystemError {
        throw e
    } catch {
        // retryingEINTR throws only SystemError; keep a sane value if that ever changes.
        throw SystemError(errno: 5, call: call, path: path)
    }
}
