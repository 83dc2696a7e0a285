// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A detached thread of its own with a name (as Foundation's Thread with `name` set and
/// `start()`), from pthread_create: the service's modules need no Foundation for it.
public enum PlainThread {
    /// Starts `body` on a new detached thread named `name` (the kernel keeps 15 bytes:
    /// what `ps -L` and gdb show, as Thread.name set it). Traps if no thread can be made,
    /// as Thread.start does.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        #if canImport(Glibc)
        var tid = pthread_t()
        #else
        var tid: pthread_t?
        #endif
        let rc = pthread_create(&tid, nil, { raw in
            #if canImport(Glibc)
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            #else
            let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
            #endif
            PlainThread.name(body.name)
            body.run()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(String(cString: strerror(rc)))")
        #if canImport(Glibc)
        pthread_detach(tid)
        #else
        pthread_detach(tid!)
        #endif
    }

    /// Names the calling thread: Linux's /proc/thread-self/comm (what pthread_setname_np
    /// writes; Glibc's Swift module lacks that call), 15 bytes at most; nothing on failure.
    private static func name(_ name: String) {
        #if canImport(Glibc)
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        PlainIO.write(fd, Array(name.utf8.prefix(15)))
        close(fd)
        #else
        _ = pthread_setname_np(name)
        #endif
    }

    private final class Body {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) { self.name = name; self.run = run }
    }
}
