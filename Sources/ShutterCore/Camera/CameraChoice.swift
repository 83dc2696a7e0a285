// SPDX-License-Identifier: BSD-2-Clause
/// One camera the board has, as `shutterctl camera` lists it: its index in
/// libcamera's order (what `cam -l` numbers, what `camera.index` means), model
/// and id.
public struct CameraListing: Codable, Equatable, Sendable {
    public var index: Int
    /// libcamera's Model property ("imx708"); "" when the camera has none.
    public var model: String
    /// libcamera's id (the device-tree path on a Pi), "sim:N" on the simulated board.
    public var id: String
    /// Whether the service runs this camera now (only in `shutterctl camera`'s list).
    public var inUse: Bool?

    public init(index: Int, model: String, id: String, inUse: Bool? = nil) {
        self.index = index
        self.model = model
        self.id = id
        self.inUse = inUse
    }

    /// "1 (imx219)" for messages.
    public var summary: String { "\(index) (\(model.isEmpty ? "unnamed sensor" : model))" }

    /// The first model that is `name` (case-insensitive), else the first that
    /// starts with it (`imx708` finds `imx708_wide`). The config's `camera.model`
    /// and `shutterctl camera MODEL` both choose this way.
    public static func firstIndex(ofModel name: String, in models: [String]) -> Int? {
        let want = name.lowercased()
        return models.firstIndex { $0.lowercased() == want }
            ?? models.firstIndex { !$0.isEmpty && $0.lowercased().hasPrefix(want) }
    }
}

/// `shutterctl camera NEXT|INDEX|MODEL`: which camera to switch to.
public enum CameraChoice: Equatable, Sendable, CustomStringConvertible {
    /// The one after the camera in use, wrapping round (the demos' front/back switch).
    case next
    /// By index in libcamera's order.
    case index(Int)
    /// By model, as `camera.model` chooses.
    case model(String)

    /// "next"; a whole number (an index); anything else a model. Nil for an
    /// empty or negative argument.
    public init?(parsing text: String) {
        let t = text.trimmedSpaces
        if t.isEmpty { return nil }
        if t.lowercased() == "next" {
            self = .next
        } else if let i = Int(t) {
            guard i >= 0 else { return nil }
            self = .index(i)
        } else {
            self = .model(t)
        }
    }

    public var description: String {
        switch self {
        case .next: return "the next camera"
        case .index(let i): return "camera \(i)"
        case .model(let m): return "model \"\(m)\""
        }
    }

    /// The index this choice picks among `cameras`, given the one in use (nil:
    /// none runs); else why not, naming the cameras there are.
    public func pick(from cameras: [CameraListing], inUse: Int?) -> Result<Int, CameraChoiceError> {
        guard !cameras.isEmpty else { return .failure(CameraChoiceError(message: "no camera is connected")) }
        let found: Int?
        switch self {
        case .next:
            found = inUse.map { ($0 + 1) % cameras.count } ?? 0
        case .index(let i):
            found = cameras.indices.contains(i) ? i : nil
        case .model(let m):
            found = CameraListing.firstIndex(ofModel: m, in: cameras.map(\.model))
        }
        guard let found else {
            return .failure(CameraChoiceError(message: "no \(description); the cameras are "
                + cameras.map(\.summary).joined(separator: ", ")))
        }
        return .success(found)
    }
}

public struct CameraChoiceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The camera a `shutterctl camera` switch chose, as the state file keeps it:
/// its index and model, so a restart finds it again (by index while the
/// model there still matches, else by model: the list's order may change when
/// a camera is unplugged).
public struct CameraPick: Codable, Equatable, Sendable {
    public var index: Int
    public var model: String

    public init(index: Int, model: String) {
        self.index = index
        self.model = model
    }

    /// Its index among `cameras` now; nil when it is gone.
    public func find(in cameras: [CameraListing]) -> Int? {
        if cameras.indices.contains(index), cameras[index].model == model { return index }
        return cameras.firstIndex { $0.model == model }
    }
}
