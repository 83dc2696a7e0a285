// SPDX-License-Identifier: BSD-2-Clause
import CShutterRTSP
import ShutterCore

/// The RTSP shim's callbacks, called on its GLib thread: in a nonisolated type of their own
/// (a closure written in main-actor code would inherit the actor and trap there). The
/// context is the server's `RTSPServer.AccessBox`.
enum RTSPCallbacks {
    /// The password as the peer sent it, NULs included (the check refuses those).
    static let check: shutter_rtsp_check_fn = { ctx, password, length, address in
        guard let ctx, let password else { return 0 }
        let box = Unmanaged<RTSPServer.AccessBox>.fromOpaque(ctx).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: password, count: length)
        return box.accepts(String(decoding: bytes, as: UTF8.self), address.map { String(cString: $0) } ?? "") ? 1 : 0
    }

    static let log: shutter_rtsp_log_fn = { ctx, priority, message in
        guard let ctx, let message else { return }
        let box = Unmanaged<RTSPServer.AccessBox>.fromOpaque(ctx).takeUnretainedValue()
        let text = String(cString: message)
        switch priority {
        case ...3: box.log.error(text)
        case 4: box.log.warning(text)
        default: box.log.notice(text)
        }
    }
}
