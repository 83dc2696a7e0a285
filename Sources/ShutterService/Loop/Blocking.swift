// SPDX-License-Identifier: BSD-2-Clause
import Dispatch

/// Runs blocking work (JPEG of 12 MP, fsync, finalising a clip) on a dedicated
/// serial queue, never on the Swift task pool, and awaits its result.
enum Blocking {
    static func run<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            queue.async { c.resume(with: Result { try body() }) }
        }
    }

    static func run<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { c in
            queue.async { c.resume(returning: body()) }
        }
    }
}
