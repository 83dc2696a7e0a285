// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterMedia

/// `shutter-media-tool timelapse --out FILM.MP4 [--fps 25] [--size WxH] [--encoder libx264]
/// [--stall-after N] PHOTO...`: the service's time-lapse maker on photos given by path.
/// Prints `progress N M` after each photo; with `--stall-after N` it stops for ever after
/// the Nth (a test kills it there). At the end a JSON summary, or `error CODE: message`.
enum TimelapseTool {
    static func run(_ arguments: [String]) -> Never {
        var args = arguments
        var options: [String: String] = [:]
        var photos: [String] = []
        while let a = args.first {
            args.removeFirst()
            guard a.hasPrefix("--") else { photos.append(a); continue }
            guard let v = args.first else { fail("\(a) needs a value") }
            args.removeFirst()
            options[String(a.dropFirst(2))] = v
        }
        guard let out = options["out"] else { fail("--out is required") }
        var settings = TimelapseSettings(fps: Int(options["fps"] ?? "25") ?? 25)
        if let s = options["size"] {
            guard let size = PixelSize(parsing: s) else { fail("--size is WIDTHxHEIGHT") }
            settings.size = size
        }
        settings.videoEncoder = options["encoder"] ?? settings.videoEncoder
        settings.preset = options["preset"] ?? settings.preset
        let stallAfter = options["stall-after"].flatMap { Int($0) }
        let list = photos.map { TimelapseMaker.Photo(path: $0, name: PlainIO.lastComponent($0)) }
        do throws(TimelapseError) {
            let s = try TimelapseMaker.make(list, to: out, settings: settings, progress: { done, of in
                say("progress \(done) \(of)")
                if done == stallAfter { while true { pause() } }
            })
            say("{\"path\":\"\(s.path)\",\"frames\":\(s.frames),\"width\":\(s.size.width),\"height\":\(s.size.height),"
                + "\"fps\":\(s.fps),\"bytes\":\(s.bytes),\"skipped\":\(s.skipped.count)}")
            exit(0)
        } catch {
            say("error \(error.code.rawValue): \(error.message)")
            exit(1)
        }
    }
}
