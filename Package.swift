// swift-tools-version:6.0
// SPDX-License-Identifier: BSD-2-Clause
// Shutter: a headless button camera service. See README.md and docs/architecture.md.
// No Swift package dependencies: system libraries come in through module maps (Sources/C*).
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

// W^X and RELRO on Linux arm64 (issues 14, 31): swiftc puts the conformance descriptors of
// Hashable, CodingKey, CaseIterable... into a writable ".rodata". GNU ld (Debian's swiftlang
// links with it) maps it with .text in one RWE segment by default, and with -z separate-code
// it keeps code apart but then makes no GNU_RELRO segment for a static Swift runtime
// (lintian's hardening-no-relro; a dynamic link gets one). gold (binutils-gold, the swift.org
// toolchains' default) puts that ".rodata" with the data and makes GNU_RELRO: named here.
// deploy/check-segments.sh checks the segments.
#if os(Linux) && arch(arm64)
let noWritableCode: [LinkerSetting] = [.unsafeFlags(["-use-ld=gold"])]
#else
let noWritableCode: [LinkerSetting] = []
#endif

// GStreamer's and GLib's headers (Debian's paths; glibconfig.h is per architecture).
#if arch(arm64)
let multiarch = "aarch64-linux-gnu"
#elseif arch(arm)
let multiarch = "arm-linux-gnueabihf"
#else
let multiarch = "x86_64-linux-gnu"
#endif
let gstreamerIncludes = ["-I/usr/include/gstreamer-1.0", "-I/usr/include/glib-2.0",
                         "-I/usr/lib/\(multiarch)/glib-2.0/include"]

let package = Package(
    name: "Shutter",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "shutterd", targets: ["shutterd"]),
        .executable(name: "shutterctl", targets: ["shutterctl"]),
    ],
    targets: [
        // System libraries (Debian -dev packages, installed by deploy/install-deps.sh).
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg"),
        .systemLibrary(name: "CExif", path: "Sources/CExif", pkgConfig: "libexif"),
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa"),
        // MQTT (libmosquitto 2.0, its own network thread): the MQTT part of ShutterService.
        .systemLibrary(name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto"),
        // libgpiod v1 (bookworm) and v2 (trixie) behind one plain C header.
        .target(name: "CGPIODShim", path: "Sources/CGPIODShim", linkerSettings: [.linkedLibrary("gpiod")]),
        // libcamera (C++): pkg-config flags for the shim; never imported by Swift.
        .systemLibrary(name: "CLibcamera", path: "Sources/CLibcamera", pkgConfig: "libcamera"),
        // C++17 shim with a plain C header: owns every libcamera object and thread.
        .target(name: "CLibcameraShim", dependencies: ["CLibcamera"]),
        // The kernel and libc calls Swift's Glibc module lacks (renameat2 RENAME_NOREPLACE,
        // adjtimex, malloc_trim, a V4L2 control), behind one plain C header.
        .target(name: "CShutterSys"),
        // All FFmpeg calls (libavcodec, libavformat, libswscale) behind one plain C header.
        .target(name: "CShutterAV",
                linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avcodec"),
                                 .linkedLibrary("swscale"), .linkedLibrary("avutil")]),

        // The web page's C side: libmicrohttpd (HTTP), libsodium (session tokens) and
        // GnuTLS (libmicrohttpd's TLS: the shim refuses renegotiation on its sessions)
        // behind one plain C header; the shim owns the daemon and its callbacks.
        .target(name: "CShutterWeb", linkerSettings: [.linkedLibrary("microhttpd"), .linkedLibrary("sodium"),
                                                      .linkedLibrary("gnutls")]),
        // Live RTSP (GStreamer's RTSP server library) behind a plain C header; the shim owns
        // the GLib loop, the media and its appsrc elements. Include paths by hand: the .pc
        // files' -pthread is a flag SwiftPM refuses (a warning on every build).
        .target(name: "CShutterRTSP", cSettings: [.unsafeFlags(gstreamerIncludes)],
                linkerSettings: [.linkedLibrary("gstrtspserver-1.0"), .linkedLibrary("gstrtsp-1.0"), .linkedLibrary("gstreamer-1.0"),
                                 .linkedLibrary("gio-2.0"), .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0")]),
        // The time stamp in the picture: FreeType (headers through pkg-config) behind one plain C
        // header, with the blend into YUV 4:2:0 planes (docs/overlay.md).
        .systemLibrary(name: "CFreeType", path: "Sources/CFreeType", pkgConfig: "freetype2"),
        .target(name: "CShutterOverlay", dependencies: ["CFreeType"]),
        // Web page passwords (libsodium Argon2id) apart from the HTTP shim, for shutterctl.
        .target(name: "CShutterPassword", linkerSettings: [.linkedLibrary("sodium")]),

        // Pure Swift heart: values, roles, state machines, policies. Imports no C module;
        // its only file system calls read the config and board files. Every executable and test links ShutterCore,
        // so its linker settings reach them all.
        .target(name: "ShutterCore", swiftSettings: strict, linkerSettings: noWritableCode),
        // The version `make` stamped, in a C file of its own (a new version, one per commit,
        // recompiles that file and relinks; no Swift module changes), and its Swift face.
        .target(name: "CShutterVersion"),
        .target(name: "ShutterBuild", dependencies: ["CShutterVersion"], swiftSettings: strict),
        // Files on the card: DCF names and the counter, atomic writes, free space, the
        // no-space classification, storage errors (and their capture mapping); plus the
        // system's wall clock and malloc_trim, through CShutterSys.
        .target(name: "ShutterStorage", dependencies: ["ShutterCore", "CShutterSys"], swiftSettings: strict),
        // Stills (libjpeg-turbo + libexif), recordings (FFmpeg) and the time stamp drawn into both.
        .target(name: "ShutterMedia",
                dependencies: ["ShutterCore", "ShutterStorage", "CTurboJPEG", "CExif", "CShutterAV", "CShutterOverlay"],
                swiftSettings: strict),
        // Real devices: libcamera, libgpiod, ALSA.
        .target(name: "ShutterHardware",
                dependencies: ["ShutterCore", "CGPIODShim", "CALSA", "CLibcameraShim", "CShutterSys"],
                swiftSettings: strict),
        // Argon2id password hashes: the web page checks them, `shutterctl web-password` makes them.
        .target(name: "ShutterPassword", dependencies: ["CShutterPassword"], swiftSettings: strict),
        // The control protocol, its client and the shutterctl commands: all shutterctl links
        // (no camera, codec, GPIO, audio or HTTP library; libsodium for web-password).
        .target(name: "ShutterControl", dependencies: ["ShutterCore", "ShutterBuild", "ShutterPassword"], swiftSettings: strict),
        // The simulated board, shipped: runs the whole service on any Linux box.
        .target(name: "ShutterSim", dependencies: ["ShutterCore"], swiftSettings: strict),
        // The phone web page: HTTP routes, sessions, login throttle, files by DCF number, the page
        // (Sources/ShutterWeb/Page: real HTML, CSS and JavaScript files, embedded by EmbedPage).
        .target(name: "ShutterWeb", dependencies: ["ShutterCore", "ShutterStorage", "ShutterPassword", "CShutterWeb", "CExif"],
                swiftSettings: strict, plugins: ["EmbedPage"]),
        // Build time only: the page's files into a Swift source (bytes and SHA-256) for ShutterWeb.
        .executableTarget(name: "page-embedder", swiftSettings: strict, linkerSettings: noWritableCode),
        .plugin(name: "EmbedPage", capability: .buildTool(), dependencies: ["page-embedder"]),
        // Wiring: service loop, control socket, web server, systemd notify, signals.
        .target(name: "ShutterService",
                dependencies: ["ShutterCore", "ShutterBuild", "ShutterControl", "ShutterStorage", "ShutterMedia", "ShutterHardware",
                               "ShutterSim", "ShutterWeb", "CMosquitto", "CShutterRTSP", "CShutterSys"],
                swiftSettings: strict),
        .executableTarget(name: "shutterd", dependencies: ["ShutterService"], swiftSettings: strict),
        .executableTarget(name: "shutterctl", dependencies: ["ShutterControl"], swiftSettings: strict),
        // Still benchmark: 12 MP I420 -> JPEG + EXIF vs bare libjpeg-turbo (`bench-still`, release).
        .executableTarget(name: "bench-still",
                          dependencies: ["ShutterMedia", "ShutterStorage", "ShutterCore", "CTurboJPEG"],
                          swiftSettings: strict),
        // Records synthetic frames + tone at real-time pace (crash and signal tests, demos).
        .executableTarget(name: "shutter-media-tool", dependencies: ["ShutterMedia", "ShutterCore"],
                          swiftSettings: strict),
        .executableTarget(name: "bench-recording", dependencies: ["ShutterMedia", "ShutterCore"],
                          swiftSettings: strict),

        .testTarget(name: "ShutterCoreTests", dependencies: ["ShutterCore"], swiftSettings: strict),
        .testTarget(name: "ShutterStorageTests", dependencies: ["ShutterStorage", "ShutterCore"],
                    swiftSettings: strict),
        .testTarget(name: "ShutterSimTests", dependencies: ["ShutterSim", "ShutterCore"], swiftSettings: strict),
        .testTarget(name: "ShutterMediaTests", dependencies: ["ShutterMedia", "ShutterStorage", "ShutterCore"],
                    swiftSettings: strict),
        .testTarget(name: "ShutterServiceTests", dependencies: ["ShutterService", "ShutterBuild", "ShutterControl", "ShutterPassword", "ShutterStorage", "ShutterMedia", "ShutterSim", "ShutterCore"],
                    swiftSettings: strict),
        .testTarget(name: "ShutterWebTests", dependencies: ["ShutterWeb", "ShutterPassword", "ShutterStorage", "ShutterCore"],
                    swiftSettings: strict),
        .testTarget(name: "ShutterHardwareTests", dependencies: ["ShutterHardware", "ShutterCore"],
                    swiftSettings: strict),
    ],
    cxxLanguageStandard: .cxx17
)
