// SPDX-License-Identifier: BSD-2-Clause
import ShutterBuild
import ShutterCore

/// `shutterctl [--socket PATH] status | tap | hold SECONDS | press | release | photo |
///             record start|stop | set KEY VALUE | get [KEY] | reset [KEY] | focus X Y|reset |
///             camera [NEXT|INDEX|MODEL] | files | delete NUMBER|last | events [--count N] |
///             sim [--fault F] [--lux L] | gestures FILE [--config CFG]`
public enum ShutterctlCommand {
    static let usage = """
        usage: shutterctl [--socket PATH] COMMAND | --version
          status                 state, LEDs, counters, free space, last error (JSON)
          tap | photo            take a photo; prints its path once it is durable
          hold SECONDS           record a clip that long from now; prints it once finalised
          press | release        press / let go of the button; release prints what the press became
          record start|stop      start (prints the clip's name) or stop (prints the files) a recording
        A capture request made while the camera is busy waits (one) or is refused at once
        with what is in progress ("busy: ..."; exit status 1).
          set KEY VALUE          change a setting now (camera.*, flash.mode, video.torch; VALUE
                                 is JSON: 2, "daylight", [1.5,2], null; a bare word is a string);
                                 kept across restarts, applied between captures
          get [KEY]              a setting (or every one): value, source (runtime|config), effective
          reset [KEY]            back to the configuration file's value (without KEY: every change)
          focus X Y | focus reset
                                 tap-to-focus: focus and meter exposure around a point of the picture
                                 (X, Y in 0...1 from its top left; 0.5 0.5 the centre), kept like `set`;
                                 reset: back to the configuration's windows
          camera [next|INDEX|MODEL]
                                 switch camera between captures (kept across restarts); if the new
                                 one fails to start, the previous one runs again (exit status 1).
                                 Without an argument: list the cameras (index, model, in use)
          files                  the photos and clips on the card, newest first: number, name,
                                 kind, bytes, modified (JSON)
          delete NUMBER|last     delete a photo or clip by its number (as `files` lists it); last:
                                 the photo just taken (the newest file, when it is a photo). Never
                                 the clip being recorded; `last` is refused while a capture is in
                                 progress (exit status 1, with the reason)
          events [--count N]     one JSON line per live event as it happens (the state first; a
                                 recording's seconds once a second; files saved and deleted,
                                 settings, the camera, gestures), until interrupted or N events
          sim [--fault none|stall|disappear|error] [--lux N] [--led-failing true|false]
              [--trigger NAME --active true|false]
                                 simulated board only: inject faults, set the light level,
                                 move a trigger input's line (triggers.inputs)
          web-password [--stdin]
                                 print the Argon2id hash of a new web page password for
                                 web.passwordHash (asked twice on the terminal, or once on stdin)
          web-token add NAME --scope view|control | web-token list | web-token revoke NAME
                                 API tokens for machines (Home Assistant, scripts): add prints a new
                                 one once; view reads, control also captures, sets and deletes
          upload status|pause|resume|retry
                                 the upload queue (files and bytes waiting, the batch being sent,
                                 the last error), hold it, let it go on, try failed files now
          interval status|pause|resume|reset
                                 interval capture (interval.*): its clock, next slot, photos taken
                                 and slots skipped; hold it, let it go on, start the count again
          timelapse [--from A] [--to B] [--fps N] [--size WxH] [--output NAME]
                                 an MP4 of the card's photos from A to B (numbers as `files` lists them,
                                 or times: 2026-12-05T06:00), 25 fps, the first photo's size within
                                 1080p, into DCIM/timelapse-FIRST-LAST.MP4; progress on stderr, then
                                 the film's path. timelapse status | timelapse cancel
          mqtt forget            remove this camera from Home Assistant: empty retained discovery
                                 configs on the broker (until the next start with mqtt.discovery)
          gestures FILE [--config CFG]
                                 replay a button trace offline (`<ms> <0|1>` per line) and
                                 print one JSON object per gesture
        The socket is --socket PATH, else $SHUTTER_SOCKET, else /run/shutter/control.sock,
        else ./shutter-data/control.sock.
        """

    public static func main(_ argv: [String]) -> Int32 {
        var args = argv
        var socket: String?
        if let i = args.firstIndex(of: "--socket") {
            guard i + 1 < args.count else { return fail("--socket needs a path") }
            socket = args[i + 1]
            args.removeSubrange(i...(i + 1))
        }
        guard let cmd = args.first else { return fail(usage, code: 64) }
        let rest = Array(args.dropFirst())
        if cmd == "-h" || cmd == "--help" { print(usage); return 0 }
        if cmd == "--version" { print("shutterctl \(ShutterVersion.string)"); return 0 }
        if cmd == "gestures" { return gestures(rest) }
        if cmd == "web-password" { return WebPasswordCommand.run(rest) }
        if cmd == "web-token" { return WebTokenCommand.run(rest, socket: socket ?? resolveSocket()) }
        if cmd == "events" { return events(rest, socket: socket ?? resolveSocket()) }
        if cmd == "timelapse" { return TimelapseCommand.run(rest, socket: socket ?? resolveSocket()) }

        var request: ControlRequest
        switch cmd {
        case "status", "tap", "press", "release", "photo", "files":
            guard rest.isEmpty else { return fail("\(cmd) takes no arguments\n\(usage)", code: 64) }
            request = ControlRequest(cmd: cmd)
        case "hold":
            guard rest.count == 1, let s = Double(rest[0]), s > 0 else {
                return fail("hold needs a number of seconds, e.g. `shutterctl hold 3`", code: 64)
            }
            request = ControlRequest(cmd: "hold", seconds: s)
        case "record":
            guard rest.count == 1, rest[0] == "start" || rest[0] == "stop" else {
                return fail("record needs start or stop", code: 64)
            }
            request = ControlRequest(cmd: "record", action: rest[0])
        case "set":
            guard rest.count == 2 else {
                return fail("set needs a key and a value, e.g. `shutterctl set camera.exposure.ev 2`", code: 64)
            }
            request = ControlRequest(cmd: "set", key: rest[0], value: settingValue(rest[1]))
        case "focus":
            if rest == ["reset"] {
                request = ControlRequest(cmd: "focus", action: "reset")
            } else {
                do throws(PointOfInterest.Refusal) {
                    let p = try PointOfInterest(rest)
                    request = ControlRequest(cmd: "focus")
                    (request.x, request.y) = (p.x, p.y)
                } catch {
                    return fail(error.message)  // status 1, as the service's own refusal
                }
            }
        case "camera":
            guard rest.count <= 1 else {
                return fail("camera takes next, an index or a model, e.g. `shutterctl camera next`", code: 64)
            }
            request = ControlRequest(cmd: "camera", camera: rest.first)
        case "upload":
            guard rest.count == 1, ["status", "pause", "resume", "retry"].contains(rest[0]) else {
                return fail("upload takes status, pause, resume or retry: `shutterctl upload status`", code: 64)
            }
            request = ControlRequest(cmd: "upload", action: rest[0])
        case "interval":
            guard rest.count == 1, ["status", "pause", "resume", "reset"].contains(rest[0]) else {
                return fail("interval takes status, pause, resume or reset: `shutterctl interval status`", code: 64)
            }
            request = ControlRequest(cmd: "interval", action: rest[0])
        case "mqtt":
            guard rest == ["forget"] else { return fail("mqtt takes forget: `shutterctl mqtt forget`", code: 64) }
            request = ControlRequest(cmd: "mqtt", action: "forget")
        case "delete":
            guard rest.count == 1, rest[0] == "last" || (rest[0].count == 7 && rest[0].allSatisfy { ("0"..."9").contains($0) }) else {
                return fail("delete needs a file's number as `shutterctl files` lists it (e.g. 1000007), or last", code: 64)
            }
            request = ControlRequest(cmd: "delete", file: rest[0])
        case "get", "reset":
            guard rest.count <= 1 else { return fail("\(cmd) takes at most one key\n\(usage)", code: 64) }
            request = ControlRequest(cmd: cmd, key: rest.first)
        case "sim":
            request = ControlRequest(cmd: "sim")
            var j = 0
            while j < rest.count {
                guard j + 1 < rest.count else { return fail("\(rest[j]) needs a value", code: 64) }
                let v = rest[j + 1]
                switch rest[j] {
                case "--fault": request.fault = v
                case "--lux":
                    guard let l = Double(v) else { return fail("--lux needs a number", code: 64) }
                    request.lux = l
                case "--led-failing": request.ledFailing = (v == "true" || v == "1")
                case "--trigger": request.trigger = v
                case "--active":
                    guard ["true", "false", "1", "0"].contains(v) else { return fail("--active needs true or false", code: 64) }
                    request.active = (v == "true" || v == "1")
                default: return fail("unknown sim option \(rest[j])", code: 64)
                }
                j += 2
            }
        default:
            return fail("unknown command \"\(cmd)\"\n\(usage)", code: 64)
        }

        let path = socket ?? resolveSocket()
        let timeout: Duration = .seconds(Int64(request.seconds ?? 0) + 120)
        do {
            let (reply, raw) = try ControlClient.send(request, to: path, timeout: timeout)
            if ["set", "get", "reset", "focus"].contains(cmd) {
                // As sent: values are JSON of any shape (null included).
                print(String(decoding: raw, as: UTF8.self).trimmedWhitespace)
            } else {
                if let d = try? PlainJSON.encode(reply, pretty: ["status", "files", "upload", "interval"].contains(cmd)) {
                    print(String(decoding: d, as: UTF8.self))
                }
            }
            if !reply.ok {
                PlainIO.write(2, "shutterctl: \(reply.error ?? "failed")\n")
                return 1
            }
            return 0
        } catch {
            return fail("\(error)", code: 69)
        }
    }

    /// `events [--count N]`: the lines as they come, flushed one by one (for a pipe).
    static func events(_ args: [String], socket: String) -> Int32 {
        var limit: Int?
        if !args.isEmpty {
            guard args.count == 2, args[0] == "--count", let n = Int(args[1]), n > 0 else {
                return fail("usage: shutterctl events [--count N]", code: 64)
            }
            limit = n
        }
        var seen = 0
        var refusal: String?
        do {
            try ControlClient.stream(ControlRequest(cmd: "events"), to: socket) { line in
                if let reply = try? PlainJSON.decode(ControlReply.self, from: line), !reply.ok {
                    refusal = reply.error ?? "refused"
                    return false
                }
                PlainIO.write(1, Array(line) + [0x0A])
                seen += 1
                return limit.map { seen < $0 } ?? true
            }
        } catch {
            return fail("\(error)", code: 69)
        }
        if let refusal { return fail(refusal) }
        return 0
    }

    /// A command-line VALUE: JSON (`2`, `"daylight"`, `[1.5,2]`, `null`), else the
    /// word as a string (`daylight`), as a shell user would type it.
    public static func settingValue(_ text: String) -> JSONValue {
        (try? JSONParser.parse(text).value) ?? .string(text)
    }

    static func resolveSocket() -> String {
        if let env = PlainIO.environment["SHUTTER_SOCKET"], !env.isEmpty { return env }
        for p in ["/run/shutter/control.sock", "./shutter-data/control.sock"] where PlainIO.fileExists(p) {
            return p
        }
        return "/run/shutter/control.sock"
    }

    /// Offline replay: the daemon's recognizer and configuration code on a trace file.
    static func gestures(_ args: [String]) -> Int32 {
        var file: String?
        var cfg: String?
        var i = 0
        while i < args.count {
            if args[i] == "--config" {
                guard i + 1 < args.count else { return fail("--config needs a file", code: 64) }
                cfg = args[i + 1]
                i += 2
            } else if file == nil {
                file = args[i]
                i += 1
            } else {
                return fail("gestures takes one FILE (and --config CFG)", code: 64)
            }
        }
        guard let file else { return fail("usage: shutterctl gestures FILE [--config CFG]", code: 64) }
        let config: ShutterConfig
        do {
            config = try ConfigLoader.load(configFile: cfg, defaultConfigFile: nil, requireBoardFile: false)
        } catch {
            return fail("configuration: \(error.description)", code: ConfigError.exitCode)
        }
        let text: String
        do throws(PlainIO.Failure) {
            guard let utf8 = String(validating: try PlainIO.readFile(file), as: UTF8.self) else {
                return fail("cannot read \(file): it is not UTF-8 text", code: 66)
            }
            text = utf8
        } catch {
            return fail("cannot read \(file): \(error)", code: 66)
        }
        let samples: [GestureReplay.Sample]
        do {
            samples = try GestureReplay.parse(text)
        } catch let e as GestureReplay.ParseError {
            return fail("\(file):\(e.line): \(e.message)", code: 65)
        } catch {
            return fail("\(file): \(error)", code: 65)
        }
        var out = ""
        for g in GestureReplay.run(samples, settings: GestureSettings(config: config)) {
            out += g.json + "\n"
        }
        PlainIO.write(1, out)
        return 0
    }

    static func fail(_ message: String, code: Int32 = 1) -> Int32 {
        PlainIO.write(2, "shutterctl: \(message)\n")
        return code
    }
}
