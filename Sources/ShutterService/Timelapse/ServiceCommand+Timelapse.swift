// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore
import ShutterMedia

extension ServiceCommand {
    /// `{"cmd":"timelapse","from":"2026-12-05T06:00","to":1000480,"fps":25,"size":"1280x720",
    /// "output":"garden.MP4"}`, or `"action": "status"|"cancel"`: refused here when a field
    /// does not read.
    static func timelapse(_ r: ControlRequest) -> Result<TimelapseAsk, Refusal> {
        func refuse(_ message: String) -> Result<TimelapseAsk, Refusal> { .failure(Refusal(message)) }
        switch r.action {
        case "status"?: return .success(.status)
        case "cancel"?: return .success(.cancel)
        case nil, "make"?: break
        case let other?: return refuse("timelapse takes \"action\": make (the default), status or cancel, not \"\(other)\"")
        }
        var order = TimelapseJob.Order(range: TimelapseRange(), fps: r.fps ?? 25)
        for (key, text) in [("from", r.from), ("to", r.to)] {
            guard let text else { continue }
            guard let bound = TimelapseBound(text) else {
                return refuse("timelapse \(key) \"\(text)\" is neither: \(TimelapseBound.help)")
            }
            if key == "from" { order.range.from = bound } else { order.range.to = bound }
        }
        guard TimelapseSettings.fpsRange.contains(order.fps) else {
            return refuse("timelapse fps \(order.fps) is outside \(TimelapseSettings.fpsRange.lowerBound)..."
                          + "\(TimelapseSettings.fpsRange.upperBound) (25 is the default)")
        }
        if let text = r.size {
            guard let size = PixelSize(parsing: text), TimelapseSettings.sizeRange.contains(size.width),
                  TimelapseSettings.sizeRange.contains(size.height), size.width % 2 == 0, size.height % 2 == 0 else {
                return refuse("timelapse size \"\(text)\" is not WIDTHxHEIGHT in even numbers within "
                              + "\(TimelapseSettings.sizeRange.lowerBound)...\(TimelapseSettings.sizeRange.upperBound), "
                              + "e.g. 1280x720")
            }
            order.size = size
        }
        if let name = r.output {
            let upper = name.uppercased()
            guard !name.isEmpty, name.utf8.count <= 200, !name.contains("/"), !name.hasPrefix("."),
                  upper.hasSuffix(".MP4"), name.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
                return refuse("timelapse output \"\(name)\" must be a file name ending in .MP4 (no folder: the film "
                              + "goes into DCIM/), e.g. garden.MP4")
            }
            order.output = name
        }
        return .success(.make(order))
    }
}
