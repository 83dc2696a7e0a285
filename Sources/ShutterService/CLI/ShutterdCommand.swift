// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterBuild
import ShutterCore
import ShutterHardware
import ShutterMedia

/// `shutterd [--board NAME|auto] [--config FILE] [--storage DIR] [--control-socket PATH]
///           [--log-level L] [--print-config] [--no-connector | --connector]
///           [--debug-stall-finish STEP] | --version`
public enum ShutterdCommand {
    static let usage = """
        usage: shutterd [--board NAME|auto] [--config FILE] [--storage DIR]
                        [--control-socket PATH] [--log-level error|warning|notice|info|debug]
                        [--print-config] [--no-connector | --connector]
                        [--debug-stall-finish before-rename|after-rename]
               shutterd --version
        Boards: rpi5 rpi4 rpi3 zero2w qemu sim (auto: the Pi this runs on, else sim).
        --no-connector: MQTT and uploads (what connects out) are left to the connector, `shutterd
        --connector`, a process of its own that reaches the camera through the control
        socket (the package runs them as shutterd.service and shutterd-connector.service).
        Signals: SIGUSR1 takes a photo, SIGUSR2 starts/stops a recording, SIGTERM/SIGINT
        finish the current file and exit, SIGHUP rereads the configuration file.
        Debugging only: --debug-stall-finish stops every clip's finish at that step for ever
        (and logs it), so that a test can kill the process or cut the power inside it.
        """

    struct Options {
        var board = "auto"
        var configFile: String?
        var storage: String?
        var socket: String?
        var logLevel: Log.Level?
        var printConfig = false
        /// `--connector`: run the connector; `--no-connector`: the service without MQTT.
        var connector: Connector = .inProcess
        enum Connector { case inProcess, elsewhere, this }
        /// `--debug-stall-finish`: a test's, never a camera's (ServiceHooks.finishReached).
        var stallFinish: RegularMP4.Step?
    }

    /// Exit codes: 0 clean stop, 64 bad usage, 78 bad configuration, others from the watchdog.
    public static func main(_ args: [String]) async -> Int32 {
        // `shutterd --exec-tied PROGRAM ARGS...`: PROGRAM, killed when its starter ends (RcloneDaemon).
        if args.first == "--exec-tied", args.count > 1 { return TiedExec.exec(Array(args.dropFirst())) }
        let log = Log("shutter.main")
        var o = Options()
        var i = 0
        func value(_ flag: String) -> String? {
            i += 1
            guard i < args.count else {
                log.error("\(flag) needs a value\n\(usage)")
                return nil
            }
            return args[i]
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "--board": guard let v = value(a) else { return 64 }; o.board = v
            case "--config": guard let v = value(a) else { return 64 }; o.configFile = v
            case "--storage": guard let v = value(a) else { return 64 }; o.storage = v
            case "--control-socket": guard let v = value(a) else { return 64 }; o.socket = v
            case "--log-level":
                guard let v = value(a) else { return 64 }
                guard let l = Log.Level(name: v) else {
                    log.error("unknown log level \"\(v)\" (error, warning, notice, info, debug)")
                    return 64
                }
                o.logLevel = l
            case "--print-config": o.printConfig = true
            case "--no-connector": o.connector = .elsewhere
            case "--connector": o.connector = .this
            case "--debug-stall-finish":
                guard let v = value(a) else { return 64 }
                guard let step = RegularMP4.Step(rawValue: v) else {
                    log.error("unknown finish step \"\(v)\" (\(RegularMP4.Step.allCases.map(\.rawValue).joined(separator: ", ")))")
                    return 64
                }
                o.stallFinish = step
            case "-h", "--help":
                print(usage)
                return 0
            case "--version":
                print("shutterd \(ShutterVersion.string)")
                return 0
            default:
                log.error("unknown option \"\(a)\"\n\(usage)")
                return 64
            }
            i += 1
        }
        if let l = o.logLevel { Log.level = l }
        if !o.printConfig { log.notice("Shutter \(ShutterVersion.string) starting") }

        var overrides: [String: String] = [:]
        var detected: String?
        if o.board == "auto" {
            detected = BoardDetection.detect()
        } else {
            overrides["board.name"] = o.board
        }
        if let s = o.storage { overrides["storage.root"] = s }
        if let s = o.socket { overrides["control.socketPath"] = s }
        // The same loading at start and on SIGHUP, so a reread compares like with like.
        let options = o
        let load: @Sendable () throws(ConfigError) -> ShutterConfig = { [overrides, detected] () throws(ConfigError) -> ShutterConfig in
            var config = try ConfigLoader.load(configFile: options.configFile, overrides: overrides,
                                               detectedBoard: detected)
            // With --storage and no explicit socket, keep the socket beside the files
            // when the default runtime directory is not ours to write.
            if options.socket == nil, options.storage != nil, !canCreate(config.control.socketPath) {
                config.control.socketPath = PlainIO.path(config.storage.root, "control.sock")
            }
            return config
        }
        let config: ShutterConfig
        do throws(ConfigError) {
            config = try load()
        } catch {
            log.error("configuration: \(error.description)")
            return ConfigError.exitCode
        }
        if o.printConfig {
            print(config.printable())
            return 0
        }
        if o.connector == .this { return await ConnectorRunner.run(config: config) }
        if o.board == "auto" {
            log.notice(detected.map { "detected a Raspberry Pi: board \($0)" }
                       ?? "no Raspberry Pi detected: using the simulated board")
        }
        let roles = config.board.name == "sim" ? BoardRoles.simulated(config: config) : BoardRoles.real(config: config)
        return await ServiceRunner.run(config: config, roles: roles, reloadConfig: load, stallFinish: o.stallFinish,
                                       connectorElsewhere: o.connector == .elsewhere)
    }

    private static func canCreate(_ socketPath: String) -> Bool {
        let dir = PlainIO.deletingLastComponent(socketPath)
        if access(dir, W_OK) == 0 { return true }
        let parent = PlainIO.deletingLastComponent(dir)
        return !FileManager.default.fileExists(atPath: dir) && access(parent, W_OK) == 0
    }
}
