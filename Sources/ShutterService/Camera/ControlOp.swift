// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// One request that changes something (`set`, `reset`, `focus`, `camera`, a
/// SIGHUP that changed the opening), as it moves through its steps.
final class ControlOp {
    enum Kind {
        case set(key: String)
        case reset(key: String?, reset: [String])
        case focus(autofocus: Bool)
        /// The `camera` request: `argument` nil lists the cameras.
        case camera(argument: String?)
        /// SIGHUP that changed the opening: nobody waits.
        case reload
    }

    enum Step {
        case start
        case listing
        case waitingForCaptures
        /// The supervisor reopens the camera (a job); `cameraStarted` once it reported the
        /// start (frames from then on are the new camera's), before the job is back.
        case reopening(cameraStarted: Bool)
        case waitingForFrames(until: MonotonicTime)
        case waitingForControls
        case saving
        case focusing
        case listingForReply
    }

    /// A reopen: the camera (nil: the one in use) and the opening, and what changed, for the log.
    struct Reopen {
        var index: Int?
        var opening: CameraOpening
        var what: String
    }

    let kind: Kind
    let reply: Reply?
    var step = Step.start
    var notes: [String] = []
    /// The settings to go back to if the reopen fails.
    var before: RuntimeSettings?
    var reopen: Reopen?
    /// Switch: the camera asked for and the one before it.
    var target: CameraListing?
    var from = "none"
    var failed: String?
    /// The change waits for the capture in progress (applied when it ends).
    var deferred = false
    /// The log said the reopen waits for the capture in progress.
    var saidWaiting = false

    init(_ kind: Kind, reply: Reply?) {
        self.kind = kind
        self.reply = reply
    }

    var isSwitch: Bool {
        if case .camera = kind { return true }
        return false
    }
}

/// The operations under way, by id (the id a job result names).
struct ControlOps {
    private var ops: [Int: ControlOp] = [:]
    private var last = 0

    mutating func begin(_ kind: ControlOp.Kind, reply: Reply?, before: RuntimeSettings? = nil) -> Int {
        last += 1
        let op = ControlOp(kind, reply: reply)
        op.before = before
        ops[last] = op
        return last
    }

    subscript(id: Int) -> ControlOp? { ops[id] }

    mutating func remove(_ id: Int) -> ControlOp? { ops.removeValue(forKey: id) }

    /// In the order they began.
    var ids: [Int] { ops.keys.sorted() }

    var all: Dictionary<Int, ControlOp>.Values { ops.values }

    /// A reopen under way whose camera has not started yet: frames still coming are the
    /// old camera's. The operation's step is the one record of it.
    var reopenPending: Bool {
        ops.values.contains { if case .reopening(cameraStarted: false) = $0.step { return true } else { return false } }
    }

    /// Whether a reopen (switch or restart) is queued or under way.
    var reopenAsked: Bool { ops.values.contains { $0.reopen != nil } }

    /// The first reopen asked for: it goes first.
    var firstReopen: Int? { ops.keys.filter { ops[$0]?.reopen != nil }.min() }

    func id(of op: ControlOp) -> Int { ops.first { $0.value === op }?.key ?? -1 }
}
