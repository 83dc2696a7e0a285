// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// How the simulated auto exposure meters the scene: a weighted mean of the
/// scene's luminance (`TestPattern.regions`), computed from the layout, not
/// from pixels, so it costs nothing per frame and never hunts.
///
/// The metered area is the picture (the crop of `roi` and `zoom`), or the
/// exposure window (`camera.exposure.window`, the point of interest of
/// `shutterctl focus`) where it lies in the picture. `camera.exposure.metering`
/// weighs inside that area, as the Raspberry Pi's tuning weighs its zones:
///
/// - `average`: every part alike (libcamera's MeteringMatrix);
/// - `centre`: all of it, and its central half (of width and height) 4 times
///   as much (MeteringCentreWeighted);
/// - `spot`: only its central quarter (of width and height) (MeteringSpot).
///
/// AE brings the metered mean to `target`, the default metering's reading of
/// the scene, so with the defaults the grey patch is at mid-grey; metering a
/// brighter part darkens the picture, a darker part brightens it.
enum SimMetering {
    /// The central half and quarter: the centre-weighted and spot zones.
    static let centreFraction = 0.5
    static let centreWeight = 3.0  // on top of the 1 everywhere: 4 times as much
    static let spotFraction = 0.25

    /// The metered area: the window's part inside the picture, else the picture.
    static func area(_ controls: CameraControls) -> NormalisedRect {
        let picture = (NormalisedRect(controls.roi) ?? .full).zoomed(controls.zoom)
        guard let window = NormalisedRect(controls.exposure.window),
              let inside = window.intersection(picture) else { return picture }
        return inside
    }

    /// The zones the mode weighs, with their weights.
    static func zones(_ mode: CameraControls.Exposure.Metering, in area: NormalisedRect)
        -> [(rect: NormalisedRect, weight: Double)]
    {
        switch mode {
        case .average: return [(area, 1)]
        case .centre: return [(area, 1), (area.central(centreFraction), centreWeight)]
        case .spot: return [(area.central(spotFraction), 1)]
        }
    }

    /// The weighted mean luminance (reflectance, 0...1) AE sees with these controls.
    static func mean(_ controls: CameraControls) -> Double {
        var sum = 0.0, weights = 0.0
        for zone in zones(controls.exposure.metering, in: area(controls)) {
            for region in TestPattern.regions {
                if let overlap = zone.rect.intersection(region.rect) {
                    sum += zone.weight * overlap.area * region.luminance
                }
            }
            weights += zone.weight * zone.rect.area
        }
        return weights > 0 ? sum / weights : 0
    }

    /// What AE aims the metered mean at: the default metering's reading of the scene.
    static let target = mean(CameraControls())
}

extension NormalisedRect {
    var area: Double { width * height }

    /// The overlap with `other`; nil when they do not overlap.
    func intersection(_ other: NormalisedRect) -> NormalisedRect? {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
        guard right > left, bottom > top else { return nil }
        return NormalisedRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The centred part `fraction` of the width and of the height.
    func central(_ fraction: Double) -> NormalisedRect { zoomed(1 / fraction) }
}
