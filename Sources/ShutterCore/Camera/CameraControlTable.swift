// SPDX-License-Identifier: BSD-2-Clause
extension CameraControls {
    /// Every sensor control, once, in the order of the configuration keys
    /// (which is `shutterctl get`'s) and of the libcamera plan: its libcamera
    /// name, its keys (path, type and bounds, value), when it is asked for (off
    /// its default unless said), why a camera lacks it, and its libcamera
    /// mapping (enum numbers from libcamera's control_ids.yaml, as rpicam-apps'
    /// option tables use them). A new control is one entry here and its value
    /// in `CameraControls`; docs/configuration.md and shutter.json(5) say what it does.
    public static let table: [CameraControl] = [
        // From libcamera 0.5 (ExposureTimeMode/AnalogueGainMode) a manual value is ignored
        // unless its mode is Manual first, and AeEnable is gone; before it a fixed
        // ExposureTime/AnalogueGain pins that half of AE, and AeEnable goes off only when
        // both are fixed.
        CameraControl("ExposureTime",
                      Key(path: "camera.exposure.shutterUs", kind: .int(0...1_000_000_000), at: \.exposure.shutterUs),
                      asks: { $0.exposure.fixedShutterMicroseconds != nil },
                      lacking: "this camera has no manual shutter",
                      libcamera: .rule(names: ["ExposureTime", "ExposureTimeMode", "AeEnable"]) { p in
                          let asked = p.controls.exposure.fixedShutterMicroseconds
                          let shutter = asked.flatMap { p.has("ExposureTime") ? Double($0) : nil }
                          if asked != nil && shutter == nil { p.lack() }
                          if p.has("ExposureTimeMode") || p.has("AnalogueGainMode") {
                              if p.has("ExposureTimeMode") { p.add("ExposureTimeMode", [shutter == nil ? 0 : 1]) }
                          } else if p.has("AeEnable") {
                              let gain = p.controls.exposure.fixedGain != nil && p.has("AnalogueGain")
                              p.add("AeEnable", [shutter != nil && gain ? 0 : 1])
                          }
                          if let shutter { p.add("ExposureTime", [shutter]) }
                      }),
        CameraControl("AnalogueGain",
                      Key(path: "camera.exposure.gain", kind: .autoOrDouble(1...64), at: \.exposure.gain),
                      asks: { $0.exposure.fixedGain != nil },
                      lacking: "this camera has no manual gain",
                      libcamera: .rule(names: ["AnalogueGain", "AnalogueGainMode"]) { p in
                          let asked = p.controls.exposure.fixedGain
                          let gain = asked.flatMap { p.has("AnalogueGain") ? $0 : nil }
                          if asked != nil && gain == nil { p.lack() }
                          if p.has("AnalogueGainMode") { p.add("AnalogueGainMode", [gain == nil ? 0 : 1]) }
                          if let gain { p.add("AnalogueGain", [gain]) }
                      }),
        CameraControl("ExposureValue", Key(path: "camera.exposure.ev", kind: .double(-8...8), at: \.exposure.ev),
                      libcamera: .number { c, _ in c.exposure.ev }),
        CameraControl("AeMeteringMode",
                      Key(path: "camera.exposure.metering", kind: .choice(Exposure.Metering.allCases.map(\.rawValue)),
                            at: \.exposure.metering),
                      libcamera: .number { c, _ in
                          switch c.exposure.metering {
                          case .centre: 0   // MeteringCentreWeighted
                          case .spot: 1     // MeteringSpot
                          case .average: 2  // MeteringMatrix
                          }
                      }),
        CameraControl("AeExposureMode",
                      Key(path: "camera.exposure.mode", kind: .choice(Exposure.Mode.allCases.map(\.rawValue)),
                            at: \.exposure.mode),
                      libcamera: .number { c, _ in
                          switch c.exposure.mode {
                          case .normal: 0  // ExposureNormal
                          case .short: 1   // ExposureShort
                          case .long: 2    // ExposureLong
                          }
                      }),
        CameraControl("AeFlickerMode",
                      Key(path: "camera.exposure.flicker", kind: .choice(Exposure.Flicker.allCases.map(\.rawValue)),
                            at: \.exposure.flicker),
                      libcamera: .rule(names: ["AeFlickerMode", "AeFlickerPeriod"]) { p in
                          let flicker = p.controls.exposure.flicker
                          switch flicker {
                          case .off:
                              p.set(0)  // FlickerOff
                          case .hz50, .hz60:
                              if p.has("AeFlickerMode") && p.has("AeFlickerPeriod"), let us = flicker.periodMicroseconds {
                                  p.add("AeFlickerMode", [1])  // FlickerManual
                                  p.add("AeFlickerPeriod", [Double(us)])
                              } else {
                                  p.lack()
                              }
                          case .auto:
                              if let top = p.camera.flickerModeMaximum, top < 2 {
                                  p.lack("this camera has no automatic flicker detection; use \"50hz\" or \"60hz\"")
                              } else {
                                  p.set(2)  // FlickerAuto
                              }
                          }
                      }),
        // Not a libcamera control: libcamera has none for an exposure metering window (core
        // and the Pi's vendor controls alike; the metering modes' weights come from the
        // camera's tuning), so the name only says what a camera lacks when it is asked.
        CameraControl("AeMeteringWindow",
                      Key(path: "camera.exposure.window", kind: .normalisedRect(nullable: true), at: \.exposure.window),
                      lacking: "libcamera has no control for an exposure metering window (the metering modes' weights "
                        + "come from the camera's tuning file); exposure meters as camera.exposure.metering says",
                      libcamera: .noControl),
        CameraControl("AwbMode",
                      Key(path: "camera.whiteBalance.mode", kind: .choice(WhiteBalance.Mode.allCases.map(\.rawValue)),
                            at: \.whiteBalance.mode),
                      lacking: "this camera has no white balance presets",
                      libcamera: .number { c, _ in
                          switch c.whiteBalance.mode {
                          case .auto: 0
                          case .incandescent: 1
                          case .tungsten: 2
                          case .fluorescent: 3
                          case .indoor: 4
                          case .daylight: 5
                          case .cloudy: 6
                          }
                      }),
        CameraControl("ColourGains",
                      Key(path: "camera.whiteBalance.gains", kind: .numbers(["red", "blue"], 0.1...32, nullable: true),
                            at: \.whiteBalance.gains),
                      lacking: "this camera has no manual white balance",
                      libcamera: .rule(names: ["ColourGains", "AwbEnable"]) { p in
                          if let g = p.controls.whiteBalance.gains, g.count == 2 {
                              if p.has("ColourGains") {
                                  if p.has("AwbEnable") { p.add("AwbEnable", [0]) }
                                  p.add("ColourGains", g)
                              } else {
                                  p.lack()
                              }
                          } else if p.has("AwbEnable") {
                              p.add("AwbEnable", [1])
                          }
                      }),
        // A still keeps the lens where the press's autofocus cycle put it: its start sets
        // AfMode only in manual focus.
        CameraControl("AfMode",
                      Key(path: "camera.focus.mode", kind: .choice(Focus.Mode.allCases.map(\.rawValue)), at: \.focus.mode),
                      lacking: "this camera has no autofocus",
                      libcamera: .rule(names: ["AfMode"]) { p in
                          let mode = p.controls.focus.effectiveMode
                          if !p.has("AfMode") {
                              p.lack()
                          } else if p.role == .video || mode == .manual {
                              let value: Double = switch mode {
                              case .manual: 0      // AfModeManual
                              case .auto: 1        // AfModeAuto
                              case .continuous: 2  // AfModeContinuous
                              }
                              p.add("AfMode", [value])
                          }
                      }),
        CameraControl("AfRange",
                      Key(path: "camera.focus.range", kind: .choice(Focus.Range.allCases.map(\.rawValue)), at: \.focus.range),
                      lacking: "this camera has no autofocus",
                      libcamera: .number { c, _ in
                          switch c.focus.range {
                          case .normal: 0
                          case .macro: 1
                          case .full: 2
                          }
                      }),
        CameraControl("AfSpeed",
                      Key(path: "camera.focus.speed", kind: .choice(Focus.Speed.allCases.map(\.rawValue)), at: \.focus.speed),
                      lacking: "this camera has no autofocus",
                      libcamera: .number { c, _ in c.focus.speed == .fast ? 1 : 0 }),
        // In ScalerCrop pixels; the shim sets AfMetering Windows with it, and none = AfMetering
        // Auto (the camera's own choice of where to look).
        CameraControl("AfWindows",
                      Key(path: "camera.focus.window", kind: .normalisedRect(nullable: true), at: \.focus.window),
                      lacking: "this camera has no autofocus",
                      libcamera: .rule(names: ["AfWindows", "AfMetering"]) { p in
                          guard p.has("AfWindows") && p.has("AfMetering") else {
                              p.lack()
                              return
                          }
                          if let window = NormalisedRect(p.controls.focus.window), let crop = p.camera.cropMaximum {
                              p.add("AfWindows", crop.part(window).values)
                          } else if p.controls.focus.window == nil {
                              p.add("AfWindows", [])
                          } else {
                              p.lack("the camera reports no crop area to place the window in")
                          }
                      }),
        // Set in manual focus only: the configured position, else the tuning's default, as
        // rpicam-apps does.
        CameraControl("LensPosition",
                      Key(path: "camera.focus.lensPosition", kind: .double(0...32, nullable: true), at: \.focus.lensPosition),
                      lacking: "this camera has no focus motor (fixed-focus lens)",
                      libcamera: .rule(names: ["LensPosition"]) { p in
                          guard p.controls.focus.effectiveMode == .manual else { return }
                          if !p.has("LensPosition") {
                              p.lack()
                          } else if let position = p.controls.focus.lensPosition ?? p.camera.defaultLensPosition {
                              p.add("LensPosition", [position])
                          }
                      }),
        CameraControl("Brightness", Key(path: "camera.image.brightness", kind: .double(-1...1), at: \.image.brightness),
                      libcamera: .number { c, _ in c.image.brightness }),
        CameraControl("Contrast", Key(path: "camera.image.contrast", kind: .double(0...32), at: \.image.contrast),
                      libcamera: .number { c, _ in c.image.contrast }),
        CameraControl("Saturation", Key(path: "camera.image.saturation", kind: .double(0...32), at: \.image.saturation),
                      libcamera: .number { c, _ in c.image.saturation }),
        CameraControl("Sharpness", Key(path: "camera.image.sharpness", kind: .double(0...16), at: \.image.sharpness),
                      libcamera: .number { c, _ in c.image.sharpness }),
        // draft::NoiseReductionMode. `auto` is what rpicam-vid and rpicam-still pick: Fast for
        // video, HighQuality for a still.
        CameraControl("NoiseReductionMode",
                      Key(path: "camera.image.denoise", kind: .choice(Image.Denoise.allCases.map(\.rawValue)),
                            at: \.image.denoise),
                      libcamera: .number { c, role in
                          switch c.image.denoise {
                          case .auto: role == .still ? 2 : 1
                          case .off: 0      // NoiseReductionModeOff
                          case .cdnOff: 3   // NoiseReductionModeMinimal
                          case .cdnFast: 1  // NoiseReductionModeFast
                          case .cdnHQ: 2    // NoiseReductionModeHighQuality
                          }
                      }),
        CameraControl("ScalerCrop",
                      Key(path: "camera.zoom", kind: .double(1...8), at: \.zoom),
                      Key(path: "camera.roi", kind: .normalisedRect(nullable: true), at: \.roi),
                      asks: { $0.zoom > 1 || $0.roi != nil },
                      lacking: "this camera cannot crop (no digital zoom)",
                      libcamera: .rule(names: ["ScalerCrop"]) { p in
                          if let crop = p.controls.scalerCrop(in: p.camera.cropMaximum), p.has("ScalerCrop") {
                              p.add("ScalerCrop", crop.values)
                          } else {
                              p.lack()
                          }
                      }),
        // Sensor HDR is switched before the open (`CameraOpening`, ShutterHardware's
        // SensorHDR): the plan follows what the opener did.
        CameraControl("HdrMode", Key(path: "camera.hdr", kind: .choice(HDR.allCases.map(\.rawValue)), at: \.hdr),
                      libcamera: .rule(names: ["HdrMode"]) { p in
                          switch p.controls.hdr {
                          case .off:
                              if p.has("HdrMode") { p.add("HdrMode", [0]) }  // HdrModeOff
                          case .auto, .singleExp:
                              p.set(3)  // HdrModeSingleExposure, as rpicam-apps sets for both
                          case .sensor:
                              switch p.camera.sensorHDR {
                              case .on:
                                  if p.has("HdrMode") { p.add("HdrMode", [0]) }  // the sensor does it, not the ISP
                              case .lacking(let why):
                                  p.lack(why)
                              case .off:
                                  p.lack("the camera was opened without sensor HDR, which is switched before the open; "
                                         + "`shutterctl set camera.hdr sensor` restarts the camera for it")
                              }
                          }
                      }),
    ]

    /// The table's keys read as the schema's (`ConfigSchema.keys`), which
    /// deploy/check-man-pages.py reads from both files.
    fileprivate typealias Key = CameraControl.Key
}
