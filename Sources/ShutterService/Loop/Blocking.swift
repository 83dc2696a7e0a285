// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import ShutterCore

/// Runs blocking work (JPEG of 12 MP, fsync, finalising a clip) on a dedicated
/// serial queue, never on the Swift task pool, and awaits its result.
///
/// Work in flight (`InFlight`): the block counts from the call until it has run and
/// resumed the caller, in the gauge of the caller's `WorkToken` (a job's). The caller
/// keeps its token while it waits here: this work ends without the clock.
enum Blocking {
    static func run<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        let work = WorkToken.current?.work
        work?.begin()
        return try await withCheckedThrowingContinuation { c in
            queue.async {
                c.resume(with: Result { try body() })
                work?.end()
            }
        }
    }

    static func run<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () -> T) async -> T {
        let work = WorkToken.current?.work
        work?.begin()
        return await withCheckedContinuation { c in
            queue.async {
                c.resume(returning: body())
                work?.end()
            }
        }
    }
}
