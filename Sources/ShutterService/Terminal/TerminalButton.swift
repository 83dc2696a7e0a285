// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The simulated board's button on a terminal: space presses and releases (a
/// terminal cannot see a key going up, so space toggles), `t` taps, `h` holds
/// for 3 s, `p` photo, `r` record start/stop, `s` status, `q` quit. The LEDs are
/// drawn in a status line. A part of the service: each key is an event.
final class TerminalButton: ServicePart {
    private let saved = Mutex<termios?>(nil)
    static let help = "keys: [space] press/release  [t] tap  [h] hold 3 s  [p] photo  [r] record on/off  [s] status  [q] quit"

    var name: String { "the terminal's keys" }

    func start(_ service: CameraService) -> PartStart {
        var t = termios()
        if tcgetattr(0, &t) == 0 {
            saved.withLock { $0 = t }
            var raw = t
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(0, TCSANOW, &raw)
        }
        print("Shutter on the simulated board. " + Self.help)
        print("A photo: press t (or space, then space again within 1 s). A video: press h, or space ... space (held over 1 s).")
        Log.terminalStatusLine = true
        // A blocking read(2) has no place in the task pool: a thread of its own.
        PlainThread.start(name: "terminal-keys") { Self.readKeys(service) }
        return .running
    }

    func stop() {
        Log.terminalStatusLine = false
        guard var t = saved.withLock({ $0 }) else { return }
        tcsetattr(0, TCSANOW, &t)
        print("")
    }

    private static func readKeys(_ service: CameraService) {
        var pressed = false
        var c: UInt8 = 0
        while read(0, &c, 1) == 1 {
            switch c {
            case UInt8(ascii: " "):
                pressed.toggle()
                service.post(.terminalButton(pressed: pressed))
            case UInt8(ascii: "t"):
                service.post(.request(.photo, .ignored))
            case UInt8(ascii: "h"):
                service.post(.request(.hold(seconds: 3), .ignored))
            case UInt8(ascii: "p"):
                service.post(.signal(.photo))
            case UInt8(ascii: "r"):
                service.post(.signal(.toggleRecording))
            case UInt8(ascii: "s"):
                service.post(.request(.status, Reply { r in
                    guard let s = r.status else { return }
                    print("\r\n\(s.state): \(s.counters.photos) photos, \(s.counters.clips) clips, last: \(s.lastFiles.joined(separator: " ")) \(s.lastError.map { "error: \($0)" } ?? "")")
                }))
            case UInt8(ascii: "q"):
                service.post(.signal(.stop))
                return
            default:
                print("\r\n" + help)
            }
        }
    }

    /// Redraws one status line ten times a second: LEDs as ● / ○.
    func run(_ service: CameraService) async {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: 100_000_000)
            let s = await service.status()
            let st = s.leds["status"].map { $0.on ? "●" : "○" } ?? "-"
            let fl = s.leds["flash"].map { $0.on ? "●" : "○" } ?? "-"
            let line = "\r\u{1B}[2K[status \(st)] [flash \(fl)] \(s.state)  photos \(s.counters.photos)  clips \(s.counters.clips)"
            PlainIO.write(1, line)
        }
    }
}
