// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterMedia
import ShutterStorage

/// Everything the service loop can be told, in the order it happened. Each
/// input of the service (the button, frames, requests, signals, the timer, the
/// camera's life) and every finished job arrives as one of these values on one
/// stream (CameraService's `inbox`); the loop handles them one at a time (ServiceLoop.swift).
enum ServiceEvent: Sendable {
    /// The physical (or simulated) button: an edge, or its caught-up answer.
    case button(ButtonEvent)
    /// Trigger input `line` (`triggers.inputs`, in order): an edge, or its caught-up answer.
    case trigger(line: Int, ButtonEvent)
    /// The terminal's space bar on a board with no line to drive: an edge now.
    case terminalButton(pressed: Bool)
    /// A video frame.
    case frame(Frame)
    /// The camera started, could not start, or its stream ended (CameraSupervisor).
    case camera(CameraSupervisor.Event)
    /// A request from the control socket, the web page or the terminal; answered through `reply`.
    case request(ServiceCommand, Reply)
    /// A capture asked for by a signal or a key: nobody waits for its answer.
    case command(CaptureCommand)
    case signal(ServiceSignal)
    /// The timer: a deadline fell due, or the half-second heartbeat.
    case tick
    /// The microphone started or stopped delivering sound.
    case microphone(running: Bool)
    /// Slow work the loop started, back with its result.
    case done(JobResult)
    /// The flash LED is lit for photo `id`'s still (the LEDs' channel played `.still`).
    case flashLit(CaptureID)
    /// A policy deleted these files (`why`: the low-space policy, upload.keepDays).
    case deletedByPolicy([String], why: String)
    /// A part of the service (the web page, RTSP, MQTT) could not start, or lost what it
    /// needs (MQTT its broker): what, in words that say what to do (`status.lastError`).
    case partTrouble(name: String, what: String)
    /// The uploader's report (`status.upload`) and what happened since its last.
    case uploadReport(UploadReport, events: [LiveEvent])
    /// A time-lapse film's progress (TimelapseJob, from its thread).
    case timelapse(TimelapseJob.Progress)
}

/// Where a request's answer goes: called once, from the loop.
struct Reply: Sendable {
    let send: @Sendable (ControlReply) -> Void
    /// When the request reached the service (`CameraService.post`): a client's `press`
    /// and `release` are dated then, not when the loop got to them (a busy loop would
    /// squeeze the two together).
    var arrivedAt: MonotonicTime?

    init(_ send: @escaping @Sendable (ControlReply) -> Void) { self.send = send }

    /// For requests nobody waits for (the terminal's keys).
    static let ignored = Reply { _ in }
}

/// The result of a job (Jobs.swift): what the loop needs to decide what comes next.
enum JobResult: Sendable {
    /// Work whose end decides nothing (an LED pattern, a discarded temp clip).
    case nothing
    case storageProbed(Result<FileSystemSpace, StorageError>)
    /// A photo written (or not): `PhotoPath.saved`.
    case photo(PhotoPath.Outcome)
    /// The AF cycle a press started (number `n`, `PhotoPath.startAutofocus`) ended.
    case autofocused(Int, AutofocusResult)
    /// A pinned frame's JPEG, in memory (`PhotoPath.encoded`).
    case pressEncoded(CaptureOrigin, serial: Int, Result<EncodedPhoto, CaptureError>)
    /// A `focused` photo's full-resolution still (`PhotoPath.stillCaptured`).
    case stillCaptured(CaptureID, Result<Frame, CaptureError>)
    /// A tap's speculative clip is gone from the card (number `n`, `ClipSession.discard`).
    case clipDiscarded(Int)
    /// A press-time clip got its DCF name (or could not).
    case clipCommitted(CaptureID, Result<(path: String, start: MonotonicTime), CaptureError>)
    case clipFinished(CaptureID, start: MonotonicTime?, ClipRecorder.Outcome)
    /// The clip's files were made regular MP4s (ClipFinisher); `problems`: those that stay fragmented, and why.
    case clipRegular(CaptureID, start: MonotonicTime?, files: [String], problems: [String])
    /// Interval capture's record was written (nil) or why not (`IntervalStateFile`).
    case intervalSaved(problem: String?)
    /// A time-lapse film was made, or why not (TimelapseJob).
    case timelapseMade(Result<TimelapseMaker.Summary, TimelapseError>)
    /// The camera has the controls it was given.
    case controlsApplied
    /// The state file was written (nil) or why not.
    case settingsSaved(op: Int?, note: String?)
    case configReread(Result<ShutterConfig, ConfigError>)
    /// The board's cameras, listed for a request (`op`) or for `status` (nil).
    case camerasListed(op: Int?, Result<[CameraListing], any Error>)
    /// A tap-to-focus autofocus cycle ended.
    case focused(op: Int, AutofocusResult)
    /// The card's finished files, newest first (`files`: CardFiles).
    case filesListed(op: Int, [MediaItem])
    /// `delete last`: the newest finished file, if any.
    case newestFile(op: Int, MediaItem?)
    /// A delete ended; the item as it was before.
    case deleted(op: Int, DCFNumber, Result<Storage.DeleteOutcome, StorageError>, MediaItem?)
}
