// SPDX-License-Identifier: BSD-2-Clause
/// The whole configuration of the service, one value. Built by `ConfigLoader`
/// from defaults ← board file ← config file ← command line, validated against
/// `ConfigSchema` once. JSON keys are the property names (camelCase), grouped
/// in sections: `{"button": {"holdMs": 1000}}` is the key path `button.holdMs`.
/// Every key's default and allowed range are in its doc comment and in
/// `ConfigSchema.keys` (which is what validation uses).
public struct ShutterConfig: Codable, Equatable, Sendable {
    public var button = Button()
    public var shutdown = Shutdown()
    public var video = Video()
    public var still = Still()
    public var audio = Audio()
    public var flash = Flash()
    public var camera = Camera()
    public var exif = Exif()
    public var storage = Storage()
    public var gpio = GPIO()
    public var watchdog = Watchdog()
    public var control = Control()
    public var board = Board()
    public var sim = Sim()
    public var web = Web()
    public var mqtt = MQTT()
    public var live = Live()
    public var upload = Upload()
    public var webhook = Webhook()
    public var interval = Interval()
    public var overlay = Overlay()
    public var triggers = Triggers()

    public init() {}

    /// The video sizes to ask for, best first: `video.sizes`, else width x height.
    public var videoSizes: [PixelSize] {
        video.sizes?.compactMap(PixelSize.init(parsing:)) ?? [PixelSize(width: video.width, height: video.height)]
    }

    /// The still sizes to ask for, best first: `still.sizes`, else width x height.
    public var stillSizes: [PixelSize] {
        still.sizes?.compactMap(PixelSize.init(parsing:)) ?? [PixelSize(width: still.width, height: still.height)]
    }

    /// The shutter button and its gesture timing.
    public struct Button: Codable, Equatable, Sendable {
        /// Stability filter: a level counts once steady this long. Default 20, 0...500 ms.
        public var stabilityMs = 20
        /// A press held this long is a hold (video), shorter is a tap (photo). Default 1000, 100...10000 ms.
        public var holdMs = 1000
        /// Double tap window; 0 = off so a tap never waits. Default 0, 0...2000 ms.
        public var doubleTapMs = 0
        /// The line reads 0 while pressed (button to ground, pull-up). Default true.
        public var activeLow = true
    }

    /// The shutdown gesture: `taps` quick taps, then a hold (it records a clip,
    /// kept like any other) kept down through a `countdownMs` LED countdown
    /// that starts at `button.holdMs`; a release cancels.
    public struct Shutdown: Codable, Equatable, Sendable {
        /// Quick taps before the final held press. Default 3, 0...10 (0 = no shutdown gesture).
        public var taps = 3
        /// Longest gap between a release and the next press in the sequence. Default 400, 100...2000 ms.
        public var gapMs = 400
        /// LED countdown before shutting down; a release cancels. Default 3000, 0...30000 ms.
        public var countdownMs = 3000
    }

    public struct Video: Codable, Equatable, Sendable {
        /// H.264 encoders: FFmpeg codec names.
        public enum Encoder: String, Codable, Sendable, CaseIterable {
            /// Software x264 (Pi 5, x86: no hardware encoder there).
            case libx264
            /// The V4L2 memory-to-memory hardware encoder (Pi 4, 3, Zero 2 W).
            case h264V4L2M2M = "h264_v4l2m2m"
        }
        /// Frame width. Default 1920, 160...4096, even.
        public var width = 1920
        /// Frame height. Default 1080, 120...4096, even.
        public var height = 1080
        /// Sizes best first ("1920x1080"); the first the camera grants exactly wins.
        /// null = [width x height]; when set it wins over width and height. Default null.
        public var sizes: [String]?
        /// Frames per second. Default 30, 1...120.
        public var fps = 30
        /// Video bitrate. Default 10000, 100...100000 kbit/s.
        public var bitrateKbps = 10000
        /// "libx264" or "h264_v4l2m2m". Default "libx264".
        public var encoder = Encoder.libx264
        /// x264 speed preset (ignored by h264_v4l2m2m): ultrafast...veryslow. Default "veryfast".
        public var preset = "veryfast"
        /// Keyframe (and MP4 fragment) interval. Default 1000, 100...10000 ms.
        public var keyframeIntervalMs = 1000
        /// Longest clip; a hold ends here. Default 60, 1...3600 s.
        public var maxSeconds = 60
        /// Split a clip into files this long; 0 = one file per clip. Default 0, 0...3600 s, ≤ maxSeconds.
        public var segmentSeconds = 0
        /// Seconds of encoded video and audio kept while idle, so a clip starts this long
        /// before the press. Default 0 (off), 0...30 s.
        public var prerollSeconds = 0
        /// Flash LED on as a torch while recording. Default false.
        public var torch = false
    }

    public struct Still: Codable, Equatable, Sendable {
        /// Photo width. Default 4608 (Camera Module 3), 64...16384.
        public var width = 4608
        /// Photo height. Default 2592, 64...16384.
        public var height = 2592
        /// Sizes best first ("4608x2592"); the first the camera grants exactly wins.
        /// null = [width x height]; when set it wins over width and height. Default null.
        public var sizes: [String]?
        /// JPEG quality. Default 93, 1...100.
        public var quality = 93
        /// Which frame a photo is (docs/control-and-api.md "The moment of the press"). Default "press".
        public var moment = StillMoment.press
    }

    public struct Audio: Codable, Equatable, Sendable {
        /// Record sound with videos. Default true.
        public var enabled = true
        /// ALSA PCM device name. Default "default", not empty.
        public var device = "default"
        /// Sample rate: 8000, 16000, 22050, 32000, 44100 or 48000. Default 48000 Hz.
        public var sampleRate = 48000
        /// Channels. Default 1, 1...2.
        public var channels = 1
        /// AAC bitrate. Default 128, 16...512 kbit/s.
        public var bitrateKbps = 128
    }

    public struct Flash: Codable, Equatable, Sendable {
        /// The seeds' AVCaptureFlashMode.
        public enum Mode: String, Codable, Sendable, CaseIterable {
            case off, on, auto
        }
        /// "off", "on" or "auto" (fire when the scene is darker than `autoLux`). Default "auto".
        public var mode = Mode.auto
        /// Scene brightness below which auto flash fires. Default 50, 0...100000 lux.
        public var autoLux = 50.0
    }

    /// The `camera` section: which camera and how it is used (`device`), and
    /// the sensor controls (`controls`, `camera.exposure.*` ... `camera.hdr`,
    /// declared in `CameraControls.table`), side by side in one JSON object.
    /// `camera.index` and `camera.exposure.ev` read through to them.
    @dynamicMemberLookup
    public struct Camera: Codable, Equatable, Sendable {
        /// Which camera, how it is mounted, how long to wait for it.
        public var device = Device()
        /// The sensor controls these keys ask for; every default asks for nothing,
        /// so the camera's automatic behaviour is kept.
        public var controls = CameraControls()

        public struct Device: Codable, Equatable, Sendable {
            /// Which camera when several are found (libcamera order), if `model` is empty. Default 0, 0...15.
            public var index = 0
            /// Pick the camera whose libcamera Model property is this ("imx708"); "" = use `index`. Default "".
            public var model = ""
            /// Mounting rotation: 0 or 180 degrees. Default 0.
            public var rotation = 0
            /// Mirror horizontally. Default false.
            public var hflip = false
            /// Mirror vertically. Default false.
            public var vflip = false
            /// Longest wait for autofocus before a still is taken anyway. Default 300, 0...5000 ms.
            public var afTimeoutMs = 300
            /// Longest wait for a still frame after the switch to the still configuration
            /// (stretched for long exposures); a camera slower than that counts as stalled.
            /// Default 3000, 500...60000 ms.
            public var stillTimeoutMs = 3000
        }

        public init() {}

        public subscript<T>(dynamicMember key: WritableKeyPath<Device, T>) -> T {
            get { device[keyPath: key] }
            set { device[keyPath: key] = newValue }
        }

        public subscript<T>(dynamicMember key: WritableKeyPath<CameraControls, T>) -> T {
            get { controls[keyPath: key] }
            set { controls[keyPath: key] = newValue }
        }

        public init(from decoder: any Decoder) throws {
            device = try Device(from: decoder)
            controls = try CameraControls(from: decoder)
        }

        public func encode(to encoder: any Encoder) throws {
            try device.encode(to: encoder)
            try controls.encode(to: encoder)
        }
    }

    /// What the photos say about the camera that took them.
    public struct Exif: Codable, Equatable, Sendable {
        /// EXIF Make. Default "" (not written).
        public var make = ""
        /// EXIF Model. Default "" (not written).
        public var model = ""
        /// Lens focal length; null = unknown, not written. Default null, 0.1...1000 mm.
        public var focalLengthMm: Double?
        /// Lens f-number; null = unknown, not written. Default null, 0.5...64.
        public var fNumber: Double?
    }

    public struct Storage: Codable, Equatable, Sendable {
        /// What to do when a capture would not fit.
        public enum LowSpacePolicy: String, Codable, Sendable, CaseIterable {
            /// Refuse the capture: never delete a person's files.
            case refuse
            /// Delete the oldest videos (never a photo) until the capture fits; with uploads
            /// on, only videos with a verified copy.
            case deleteOldestVideos = "delete-oldest-videos"
            /// Delete the oldest files with a verified copy (`upload`): videos first, then
            /// photos; never one without a copy.
            case deleteUploaded = "delete-uploaded"
        }
        /// Where DCIM/ goes (the card's mount point). Default "/var/lib/shutter", not empty.
        public var root = "/var/lib/shutter"
        /// "refuse", "delete-oldest-videos" or "delete-uploaded". Default "refuse".
        public var lowSpacePolicy = LowSpacePolicy.refuse
        /// Space always left free besides a capture's own need. Default 64, 0...1000000 MB.
        public var minFreeMB = 64
        /// Refuse to write unless `root` is a mount point (a card that is not mounted
        /// must not fill the system disk). Default false.
        public var requireMountPoint = false
    }

    /// GPIO lines are names ("GPIO17") or offsets on the chip (17 or "17").
    public struct GPIO: Codable, Equatable, Sendable {
        /// Line bias for the button input.
        public enum Bias: String, Codable, Sendable, CaseIterable {
            case pullUp = "pull-up", pullDown = "pull-down", disabled, asIs = "as-is"
        }
        /// The GPIO chip's label ("pinctrl-rp1"); "" = no GPIO (simulated board). Default "".
        public var chipLabel = ""
        /// Button input line. Default "GPIO17", not empty.
        public var button = "GPIO17"
        /// Button bias: "pull-up", "pull-down", "disabled", "as-is". Default "pull-up".
        public var buttonBias = Bias.pullUp
        /// Status LED output line; "" = none. Default "GPIO27".
        public var statusLed = "GPIO27"
        /// Flash LED output line; "" = none. Default "GPIO22".
        public var flashLed = "GPIO22"
    }

    public struct Watchdog: Codable, Equatable, Sendable {
        /// No frame for this long means the camera is stalled. Default 2000, 100...60000 ms.
        public var frameTimeoutMs = 2000
        /// Camera restarts before giving up to systemd. Default 5, 0...100.
        public var maxRestarts = 5
        /// Wait before the first restart (doubling after). Default 1000, 0...600000 ms.
        public var restartBackoffMs = 1000
    }

    public struct Control: Codable, Equatable, Sendable {
        /// Unix socket for shutterctl. Default "/run/shutter/control.sock", not empty.
        public var socketPath = "/run/shutter/control.sock"
    }

    /// The phone web page (docs/control-and-api.md "From a phone"); off unless enabled and a password hash is set.
    public struct Web: Codable, Equatable, Sendable {
        /// Serve the web page and API. Default false.
        public var enabled = false
        /// Address and port to listen on ("0.0.0.0:8080", "[::]:8080", "127.0.0.1:0" = any free port);
        /// ignored when systemd passes the socket. Default "0.0.0.0:8080".
        public var listen = "0.0.0.0:8080"
        /// The password as an Argon2id hash (`shutterctl web-password` prints one); "" = none,
        /// and then the web server does not start. Default "".
        public var passwordHash = ""
        /// PEM certificate and private key files for HTTPS; both or neither. Default "" (plain HTTP).
        public var tlsCertificate = ""
        public var tlsKey = ""
    }

    /// MQTT and Home Assistant discovery (docs/home-automation.md); off unless enabled.
    public struct MQTT: Codable, Equatable, Sendable {
        /// Connect to the broker. Default false.
        public var enabled = false
        /// The broker: "mqtt://HOST:PORT" (plain, port 1883 when left out) or "mqtts://HOST:PORT"
        /// (TLS, 8883). Default "mqtt://localhost:1883".
        public var url = "mqtt://localhost:1883"
        /// User name for the broker; "" = none. Default "".
        public var username = ""
        /// A file whose first line is the broker password (never the password itself in the
        /// configuration); "" = none. Default "".
        public var passwordFile = ""
        /// TLS: the CA certificate (PEM) the broker's certificate is checked against; "" = the
        /// system's CAs (mqtts only). Client certificate and key (PEM), both or neither. Default "".
        public var caFile = ""
        public var certFile = ""
        public var keyFile = ""
        /// The camera's id in topics and in Home Assistant, [a-z0-9_-]; "" = the host name
        /// (lower-cased, other characters as "-"). Default "".
        public var name = ""
        /// The topic everything is published under; "" = "shutter/<name>". Default "".
        public var topic = ""
        /// Publish Home Assistant discovery configs (false clears them at start). Default true.
        public var discovery = true
        /// Home Assistant's discovery prefix. Default "homeassistant".
        public var discoveryPrefix = "homeassistant"
        /// How the configs are published: "device", one retained config for the whole camera
        /// (`<prefix>/device/<name>/config`, Home Assistant 2024.11 and later), or "entity", one
        /// per entity (`<prefix>/<component>/<name>/<object>/config`, any Home Assistant).
        /// Switching migrates Home Assistant's entities as its documentation describes. Default "device".
        public var discoveryForm = DiscoveryForm.device

        public enum DiscoveryForm: String, Codable, Sendable, CaseIterable { case device, entity }
    }

    /// Files off the card through rclone (docs/uploads.md); off unless enabled. The queue and
    /// its checks are Shutter's, the protocols rclone's; nothing on the card is deleted for
    /// it, and the low-space policy then deletes only files with a verified copy.
    public struct Upload: Codable, Equatable, Sendable {
        public enum What: String, Codable, Sendable, CaseIterable { case both, photos, clips }
        public enum Layout: String, Codable, Sendable, CaseIterable {
            /// YEAR/MONTH/DAY/NAME from the file's time, when the clock was trusted; else as `dcf`.
            case date
            /// The card's own folders: 100SHTR/NAME.
            case dcf
        }
        /// Upload every finished photo and clip. Default false.
        public var enabled = false
        /// The rclone remote and path the files go to ("nas:camera/garden"); needed when enabled.
        public var remote = ""
        /// The rclone configuration file naming that remote, readable by the service. Default
        /// "/etc/shutter/rclone.conf".
        public var rcloneConfig = "/etc/shutter/rclone.conf"
        /// The rclone program. Default "/usr/bin/rclone" (Debian's package).
        public var rclone = "/usr/bin/rclone"
        /// "both", "photos" or "clips". Default "both".
        public var what = What.both
        /// rclone's --bwlimit ("1M" = 1 MiB/s, "512k", "08:00,512k 19:00,off"); "" = none. Default "".
        public var bandwidth = ""
        /// "date" or "dcf". Default "date".
        public var layout = Layout.date
        /// Delete a file from the card this many days after its copy was verified; 0 = never
        /// (only the low-space policy deletes, verified files only). Default 0, 0...3650.
        public var keepDays = 0
        /// Say uploads fail (status, the MQTT problem sensor) when none has worked for this
        /// long while files wait. Default 30, 1...10080 minutes.
        public var alertMinutes = 30
    }

    /// An HTTP POST for each photo and clip (docs/webhook.md), from a durable queue on the
    /// card; off unless enabled.
    public struct Webhook: Codable, Equatable, Sendable {
        public enum Attach: String, Codable, Sendable, CaseIterable {
            /// The event as JSON only.
            case none
            /// multipart/form-data: the event, and the photo's EXIF thumbnail (a clip's poster).
            case thumbnail
            /// multipart/form-data: the event, and the photo itself (a clip's poster).
            case photo
        }
        /// POST each event. Default false.
        public var enabled = false
        /// "http://..." or "https://..." (certificates checked against the system's CAs); needed when enabled.
        public var url = ""
        /// Which captures post: "photo", "clip". Default both.
        public var events = ["photo", "clip"]
        /// "none", "thumbnail" or "photo". Default "none".
        public var attach = Attach.none
        /// The longest one POST may take, 1...120 s. Default 10.
        public var timeoutSeconds = 10
        /// The curl program (it speaks HTTP and TLS for the webhook). Default "/usr/bin/curl".
        public var curl = "/usr/bin/curl"
        /// The CA certificates (PEM) an https:// receiver's certificate is checked against
        /// instead of the system's: a receiver with a certificate of its own (Node-RED, a
        /// Home Assistant on the LAN). "" = the system's CAs.
        public var caFile = ""
    }

    /// Interval capture (docs/interval.md): a photo every `everySeconds`, through the same
    /// capture path as a tap; off unless enabled.
    public struct Interval: Codable, Equatable, Sendable {
        /// Take photos at the interval. Default false.
        public var enabled = false
        /// Seconds between photos, on a grid aligned to the epoch in local time (60 lands on
        /// :00). Default 60, 1...86400.
        public var everySeconds = 60
        /// Daily windows in local time, "HH:MM-HH:MM" separated by commas; a window may
        /// cross midnight ("22:00-06:00"); "" = all day. Default "".
        public var windows = ""
        /// Photos in all (kept across restarts); 0 = no limit. Default 0, 0...1000000.
        public var count = 0
    }

    /// The time stamp in the picture (docs/overlay.md): the date and time, and a name, burned
    /// into photos, clips and the live stream, from a trusted clock only; off unless enabled.
    public struct Overlay: Codable, Equatable, Sendable {
        public enum Position: String, Codable, Sendable, CaseIterable {
            case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right"
        }
        /// Draw the stamp. Default false.
        public var enabled = false
        /// The time as strftime(3) writes it, in local time ("%Y-%m-%d %H:%M:%S"); at most 64
        /// characters. Default "%Y-%m-%d %H:%M:%S".
        public var format = "%Y-%m-%d %H:%M:%S"
        /// Drawn before the time ("Shed"); "" = none. Default "".
        public var name = ""
        /// The corner: "top-left", "top-right", "bottom-left", "bottom-right". Default "bottom-right".
        public var position = Position.bottomRight
        /// The text's height in percent of the picture's height (the same look on a photo and a
        /// clip). Default 4, 1...20.
        public var size = 4
        /// The font file (TrueType or OpenType), read by FreeType at start. Default
        /// "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf" (Debian's fonts-dejavu-core).
        public var font = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
    }

    /// Live H.264 from the service's own encoder (docs/home-automation.md "Live video"):
    /// the page's `/api/live.mp4` while the page is on, RTSP when enabled.
    public struct Live: Codable, Equatable, Sendable {
        public var rtsp = RTSP()
        /// Viewers at once, for RTSP and for the page's live video each; one more is refused. Default 4, 1...16.
        public var maxViewers = 4
        /// A second, smaller stream for the viewers ("1280x720", both even, at most the video
        /// size), from an encoder of its own while someone watches; "" = the camera's own
        /// stream (no extra encode with pre-roll on). Default "".
        public var size = ""

        public struct RTSP: Codable, Equatable, Sendable {
            /// Serve rtsp://HOST:PORT/live. Default false.
            public var enabled = false
            /// Address and port to listen on ("127.0.0.1:0" = any free port). Default "0.0.0.0:8554".
            public var listen = "0.0.0.0:8554"
            /// No authentication at all. Without it a viewer needs a web API token (or the
            /// page's password) as the Basic password, and shutterd refuses to start when there
            /// is neither. Default false.
            public var open = false
        }
    }

    public struct Board: Codable, Equatable, Sendable {
        /// Board profile (boards/NAME.json) layered under the config file. Default "sim",
        /// letters, digits, '-' and '_'.
        public var name = "sim"
        /// Human name of the board, for logs and STATUS=. Default "".
        public var description = ""
        /// For people reading the board file: how it differs from the hardware it stands
        /// for (the emulated board's chip label, microphone, detection). Never logged. Default "".
        public var notes = ""
    }

    /// The simulated board (`--board sim`).
    public struct Sim: Codable, Equatable, Sendable {
        /// A still stops video for this long, as a Pi's mode switch does. Default 500, 0...10000 ms.
        public var modeSwitchMs = 500
        /// The simulated scene's luminance, which auto exposure follows. Default 400, 0...100000 lux.
        public var sceneLux = 400.0
        /// The simulated scene's light, against which white balance tints. Default 5000, 1500...12000 K.
        public var sceneKelvin = 5000
        /// The simulated subject's distance as a lens position: the lens there is sharp. Default 1, 0...32 dioptres.
        public var subjectDioptres = 1.0
        /// The simulated cameras in libcamera's order (`shutterctl camera` switches
        /// between them); null = one camera, "Shutter Sim Camera". Default null.
        public var cameras: [SimCameraEntry]?

        /// One simulated camera.
        public struct SimCameraEntry: Codable, Equatable, Sendable {
            /// Its model (EXIF Model, `status.camera.model`).
            public var model: String
            /// Listed, but fails to start (a loose ribbon cable). Default false.
            public var broken = false
            /// The largest size it grants ("1280x720"), video and still; null = any. Default null.
            public var maxSize: String?
            /// Its sensor has an HDR mode switched at open (as Camera Module 3's
            /// imx708): `camera.hdr` `sensor` restarts it into that mode. Default false.
            public var sensorHdr = false
            /// How long its start takes (a slow sensor power-up): a switch or a
            /// restart to it waits this long for frames. Default 0, 0...30000 ms.
            public var startDelayMs = 0

            public init(model: String, broken: Bool = false, maxSize: String? = nil, sensorHdr: Bool = false,
                        startDelayMs: Int = 0) {
                self.model = model
                self.broken = broken
                self.maxSize = maxSize
                self.sensorHdr = sensorHdr
                self.startDelayMs = startDelayMs
            }

            enum CodingKeys: String, CodingKey { case model, broken, maxSize, sensorHdr, startDelayMs }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                self.init(model: try c.decode(String.self, forKey: .model),
                          broken: try c.decodeIfPresent(Bool.self, forKey: .broken) ?? false,
                          maxSize: try c.decodeIfPresent(String.self, forKey: .maxSize),
                          sensorHdr: try c.decodeIfPresent(Bool.self, forKey: .sensorHdr) ?? false,
                          startDelayMs: try c.decodeIfPresent(Int.self, forKey: .startDelayMs) ?? 0)
            }
        }

        /// The second (still) stream the simulated pipeline grants alongside video,
        /// [width, height]; null = one stream only (as vimc). Default null.
        public var stillStream: [Int]?

        // Explicit so `--print-config` and the key table show an unset stream as null.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(modeSwitchMs, forKey: .modeSwitchMs)
            try c.encode(sceneLux, forKey: .sceneLux)
            try c.encode(sceneKelvin, forKey: .sceneKelvin)
            try c.encode(subjectDioptres, forKey: .subjectDioptres)
            try c.encode(cameras, forKey: .cameras)
            try c.encode(stillStream, forKey: .stillStream)
        }
    }
}
