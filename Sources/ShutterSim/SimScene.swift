// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// What is in front of the simulated camera: how bright it is, the colour of
/// its light and how far away the subject is. The picture (`TestPattern`) is
/// colour bars over a white and a dark patch, a neutral grey patch
/// (reflectance `greyReflectance`) and sharp black-and-white stripes, so
/// exposure, metering, white balance and focus can be measured on it.
public struct SimScene: Sendable, Equatable {
    /// Scene luminance in lux: auto exposure exposes for it (1/400 s at gain 1 for 400 lux).
    public var lux: Double = 400
    /// The light's colour temperature in kelvin: white balance set for a colder
    /// light than this makes the picture warmer (redder), for a warmer one bluer.
    public var colourTemperature: Double = 5000
    /// The subject's distance as a lens position, in dioptres (1 / metres):
    /// the lens at this position renders it sharp.
    public var subjectDioptres: Double = 1

    public init(lux: Double = 400, colourTemperature: Double = 5000, subjectDioptres: Double = 1) {
        self.lux = lux
        self.colourTemperature = colourTemperature
        self.subjectDioptres = subjectDioptres
    }

    /// The grey patch: mid-grey, where auto exposure at EV 0 with the default
    /// metering puts it (0.45 of full scale).
    public static let greyReflectance = 0.45
    /// The white patch (a white card): metered, the picture darkens.
    public static let whiteReflectance = 0.9
    /// The dark patch (a black card): metered, the picture brightens.
    public static let darkReflectance = 0.05
}

/// How the picture is drawn from the scene: what the sensor, lens and ISP did.
struct SimRender: Sendable, Equatable {
    /// Output level of a perfect white (reflectance 1), before clipping:
    /// shutter × gain × lux / 10^6, so 1 at auto exposure, EV 0 and the default metering.
    var level: Double = 1
    /// Red and blue against green on a neutral surface (1 = neutral).
    var redTint: Double = 1
    var blueTint: Double = 1
    /// Defocus blur: a box radius as a fraction of the scene's width.
    var blur: Double = 0
    /// The part of the scene shown (digital zoom, region of interest).
    var crop = NormalisedRect.full
    var brightness: Double = 0
    var contrast: Double = 1
    var saturation: Double = 1
}

/// The simulated sensor's state from frame to frame: auto exposure and
/// continuous autofocus converge a step per frame (halfway, in stops for
/// exposure), so a change settles over a few frames, deterministically.
struct SimOptics: Sendable {
    /// Shutter × gain now, in µs (nil: not yet exposed; the first frame starts at the target).
    var exposureProduct: Double?
    /// The lens position now, in dioptres.
    var lens: Double
    /// An autofocus cycle (`autofocus()`) ended on the subject: the lens stays there in `auto` mode.
    var autofocused = false

    static let maxShutter = 33_000.0
    static let minShutter = 100.0
    static let maxGain = 16.0
    /// Blur radius per dioptre of defocus, as a fraction of the scene's width.
    static let blurPerDioptre = 0.004
    /// The reference temperature: a neutral surface under it has equal raw channels.
    static let neutralKelvin = 5000.0

    init(lens: Double) { self.lens = lens }

    /// The colour temperature each white-balance mode corrects for (libcamera's
    /// Raspberry Pi tuning has ranges around these); nil for auto.
    static func kelvin(_ mode: CameraControls.WhiteBalance.Mode) -> Double? {
        switch mode {
        case .auto: return nil
        case .incandescent: return 2700
        case .tungsten: return 3000
        case .fluorescent: return 4000
        case .indoor: return 3500
        case .daylight: return 5500
        case .cloudy: return 7000
        }
    }

    /// Raw red and blue against green of a neutral surface lit at `kelvin`:
    /// warmer light (fewer kelvin) is redder and less blue.
    static func rawTint(_ kelvin: Double) -> (red: Double, blue: Double) {
        let k = max(1000, kelvin)
        return (neutralKelvin / k, k / neutralKelvin)
    }

    /// The exposure product auto exposure aims for: the metered luminance at
    /// AE's target (`SimMetering`), times 2^EV. With the default metering that
    /// is the grey patch at mid-grey, 1/400 s at 400 lux.
    static func target(_ controls: CameraControls, _ scene: SimScene) -> Double {
        var ev = controls.exposure.ev
        ev = min(8, max(-8, ev))
        let metered = SimMetering.target / max(SimMetering.mean(controls), 1e-3)
        var t = 1_000_000 / max(scene.lux, 0.01) * Double.pow2(ev) * metered
        t = min(maxShutter * maxGain, max(minShutter, t))
        if let s = controls.exposure.fixedShutterMicroseconds, let g = controls.exposure.fixedGain {
            t = Double(s) * g
        } else if let s = controls.exposure.fixedShutterMicroseconds {
            t = Double(s) * min(maxGain, max(1, t / Double(s)))
        } else if let g = controls.exposure.fixedGain {
            t = g * min(maxShutter, max(minShutter, t / g))
        }
        return t
    }

    /// Shutter and gain for an exposure product: fixed ones as asked, else the
    /// shutter first (up to 1/30 s), then gain.
    static func split(_ product: Double, _ controls: CameraControls) -> (shutter: Double, gain: Double) {
        if let s = controls.exposure.fixedShutterMicroseconds {
            return (Double(s), controls.exposure.fixedGain ?? max(1, product / Double(s)))
        }
        if let g = controls.exposure.fixedGain { return (max(minShutter, product / g), g) }
        let shutter = min(maxShutter, max(minShutter, product))
        return (shutter, min(maxGain, max(1, product / shutter)))
    }

    /// One frame's worth of convergence towards what the controls ask.
    mutating func step(_ controls: CameraControls, _ scene: SimScene) {
        let target = Self.target(controls, scene)
        if let e = exposureProduct, controls.exposure.fixedShutterMicroseconds == nil || controls.exposure.fixedGain == nil {
            let next = (e * target).squareRoot()  // halfway in stops
            exposureProduct = abs(next / target - 1) < 0.01 ? target : next
        } else {
            exposureProduct = target
        }
        switch controls.focus.effectiveMode {
        case .manual:
            if let p = controls.focus.lensPosition { lens = p }
        case .continuous:
            let next = lens + (scene.subjectDioptres - lens) / 2
            lens = abs(next - scene.subjectDioptres) < 0.01 ? scene.subjectDioptres : next
        case .auto:
            if autofocused { lens = scene.subjectDioptres }
        }
    }

    /// The picture these settle on now.
    func render(_ controls: CameraControls, _ scene: SimScene) -> SimRender {
        var r = SimRender()
        let product = exposureProduct ?? Self.target(controls, scene)
        r.level = product * max(scene.lux, 0) / 1_000_000
        let (red, blue) = whiteBalanceGains(controls, scene)
        let raw = Self.rawTint(scene.colourTemperature)
        r.redTint = raw.red * red
        r.blueTint = raw.blue * blue
        r.blur = abs(lens - scene.subjectDioptres) * Self.blurPerDioptre
        r.crop = (NormalisedRect(controls.roi) ?? .full).zoomed(controls.zoom)
        r.brightness = controls.image.brightness
        r.contrast = controls.image.contrast
        r.saturation = controls.image.saturation
        return r
    }

    /// The red and blue gains in use: manual ones, those that neutralise the
    /// mode's temperature, or (auto) the scene's.
    func whiteBalanceGains(_ controls: CameraControls, _ scene: SimScene) -> (red: Double, blue: Double) {
        if let g = controls.whiteBalance.gains, g.count == 2 { return (g[0], g[1]) }
        let raw = Self.rawTint(Self.kelvin(controls.whiteBalance.mode) ?? scene.colourTemperature)
        return (1 / raw.red, 1 / raw.blue)
    }

    /// What this frame reports: the exposure, gains, colour temperature and lens in effect.
    func metadata(_ controls: CameraControls, _ scene: SimScene, autofocusSucceeds: Bool) -> FrameMetadata {
        let (shutter, gain) = Self.split(exposureProduct ?? Self.target(controls, scene), controls)
        let (red, blue) = whiteBalanceGains(controls, scene)
        // The temperature these gains correct for (rawTint inverted on red).
        let kelvin = Self.neutralKelvin * red
        var m = FrameMetadata(exposureTimeMicroseconds: Int(shutter.rounded()), analogueGain: gain, digitalGain: 1,
                              lux: scene.lux, colourTemperature: Int(kelvin.rounded()), lensPosition: lens)
        m.colourGains = [red, blue]
        let manualExposure = controls.exposure.fixedShutterMicroseconds != nil && controls.exposure.fixedGain != nil
        m.exposureValue = manualExposure ? 0 : min(8, max(-8, controls.exposure.ev))
        m.autoWhiteBalance = controls.whiteBalance.gains == nil && controls.whiteBalance.mode == .auto
        let crop = (NormalisedRect(controls.roi) ?? .full).zoomed(controls.zoom)
        m.digitalZoomRatio = 1 / max(crop.width, 1e-3)
        switch controls.focus.effectiveMode {
        case .manual: m.autofocusState = .idle
        case .auto: m.autofocusState = autofocused ? (autofocusSucceeds ? .focused : .failed) : .idle
        case .continuous:
            m.autofocusState = !autofocusSucceeds ? .failed
                : abs(lens - scene.subjectDioptres) < 0.05 ? .focused : .scanning
        }
        return m
    }
}

extension Double {
    fileprivate static func pow2(_ x: Double) -> Double {
        // exp2 without Foundation: integer part by doubling, the rest by a series good to 1e-9.
        let n = x.rounded(.down)
        var r = 1.0
        for _ in 0..<Int(abs(n)) { r = n < 0 ? r / 2 : r * 2 }
        let f = (x - n) * 0.6931471805599453
        var term = 1.0, sum = 1.0
        for i in 1..<20 {
            term *= f / Double(i)
            sum += term
        }
        return r * sum
    }
}
