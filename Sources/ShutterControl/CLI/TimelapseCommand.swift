// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// `shutterctl timelapse [--from A] [--to B] [--fps N] [--size WxH] [--output NAME]`: shutterd
/// makes an MP4 of the card's photos in the range (it holds the card and the encoder; the
/// film goes into DCIM/ beside the photos). Waits for the film, printing its progress to
/// stderr ("timelapse: 120 of 720 photos"), then the reply as `status` prints its JSON.
/// `timelapse status` shows the film being made, `timelapse cancel` stops it.
enum TimelapseCommand {
    static let usage = "usage: shutterctl timelapse [--from A] [--to B] [--fps N] [--size WxH] [--output NAME] "
        + "| timelapse status | timelapse cancel\n  A, B: \(TimelapseBound.help)"

    static func run(_ args: [String], socket: String) -> Int32 {
        var request = ControlRequest(cmd: "timelapse")
        if args == ["status"] || args == ["cancel"] {
            request.action = args[0]
            return finish(try? ControlClient.send(request, to: socket), socket: socket)
        }
        var i = 0
        while i < args.count {
            guard i + 1 < args.count else { return ShutterctlCommand.fail("\(args[i]) needs a value\n\(usage)", code: 64) }
            let v = args[i + 1]
            switch args[i] {
            case "--from": request.from = v
            case "--to": request.to = v
            case "--fps":
                guard let n = Int(v) else { return ShutterctlCommand.fail("--fps needs a whole number, e.g. 25", code: 64) }
                request.fps = n
            case "--size": request.size = v
            case "--output": request.output = v
            default: return ShutterctlCommand.fail("unknown timelapse option \(args[i])\n\(usage)", code: 64)
            }
            i += 2
        }
        var said = ""
        let answer: (ControlReply, [UInt8])
        do {
            answer = try ControlClient.send(request, to: socket) { line in
                guard let e = try? JSONParser.parse(String(decoding: line, as: UTF8.self)).value,
                      case .object(let o) = e, o["event"] == .string("timelapse"), o["state"] == .string("making"),
                      case .int(let done)? = o["done"], case .int(let of)? = o["of"], of > 0 else { return }
                let text = "timelapse: \(done) of \(of) photos"
                guard text != said else { return }
                said = text
                PlainIO.write(2, text + "\n")
            }
        } catch {
            return ShutterctlCommand.fail("\(error)", code: 69)
        }
        return finish(answer, socket: socket)
    }

    private static func finish(_ answer: (ControlReply, [UInt8])?, socket: String) -> Int32 {
        guard let (reply, _) = answer else {
            return ShutterctlCommand.fail("cannot reach shutterd at \(socket)", code: 69)
        }
        if let d = try? PlainJSON.encode(reply, pretty: true) { print(String(decoding: d, as: UTF8.self)) }
        if !reply.ok {
            PlainIO.write(2, "shutterctl: \(reply.error ?? "failed")\n")
            return 1
        }
        return 0
    }
}
