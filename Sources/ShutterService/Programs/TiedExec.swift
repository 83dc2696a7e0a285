// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterSys
import ShutterCore

/// A program that ends with the thread that started it: `shutterd --exec-tied PROGRAM ARGS...`
/// sets PR_SET_PDEATHSIG and becomes PROGRAM. posix_spawn cannot set it, and util-linux's
/// `setpriv --pdeathsig` fails under the connector's unit (it applies capabilities, which an
/// empty CapabilityBoundingSet= refuses).
enum TiedExec {
    /// The argv that runs `argv` tied to the calling thread, through this very binary.
    static func argv(_ argv: [String]) -> [String] {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return argv }
        let me = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return [me, "--exec-tied"] + argv
    }

    /// Becomes `argv[0]`; returns only when it cannot (status 127, as a shell would).
    static func exec(_ argv: [String]) -> Int32 {
        var pointers = argv.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        _ = shutter_exec_tied(&pointers)
        let why = String(cString: strerror(errno))
        PlainIO.write(2, "shutterd --exec-tied: cannot run \(argv[0]): \(why)\n")
        return 127
    }
}
