// SPDX-License-Identifier: BSD-2-Clause
import CALSA
import ShutterCore
#if canImport(Glibc)
import Glibc
#endif

/// The ALSA calls of a capture session: open and configure a PCM, date a chunk,
/// name a failure. Used only on the capture thread.
enum PCMCapture {
    /// Opens `device` for blocking capture of interleaved S16_LE with monotonic
    /// timestamps, and starts it. Returns it with the rate and period the device granted.
    static func open(_ device: String, sampleRate: Int, channels: Int,
                     periodFrames: Int) throws -> (pcm: OpaquePointer, granted: CaptureSession.Granted) {
        var handle: OpaquePointer?
        var rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, 0)
        guard rc == 0, let pcm = handle else { throw ALSAError.openFailed(rc, device: device, call: "snd_pcm_open") }
        do {
            let (rate, period) = try setHardware(pcm, device: device, sampleRate: sampleRate, channels: channels,
                                                 periodFrames: periodFrames)
            try setSoftware(pcm, device: device)
            rc = snd_pcm_start(pcm)
            guard rc == 0 else { throw ALSAError.openFailed(rc, device: device, call: "snd_pcm_start") }
            return (pcm, CaptureSession.Granted(rate: rate, periodFrames: period))
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
    }

    private static func setHardware(_ pcm: OpaquePointer, device: String, sampleRate: Int, channels: Int,
                                    periodFrames: Int) throws -> (rate: Int, period: Int) {
        var hw: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hw) == 0, let hw else {
            throw ALSAError(.ioError, "Out of memory setting up \"\(device)\".")
        }
        defer { snd_pcm_hw_params_free(hw) }
        func check(_ rc: Int32, _ call: String) throws {
            if rc < 0 { throw ALSAError.openFailed(rc, device: device, call: call) }
        }
        try check(snd_pcm_hw_params_any(pcm, hw), "snd_pcm_hw_params_any")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "set_access")
        try check(snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE), "set_format S16_LE")
        try check(snd_pcm_hw_params_set_channels(pcm, hw, UInt32(channels)), "set_channels \(channels)")
        var rate = UInt32(sampleRate)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir), "set_rate_near \(sampleRate)")
        var period = snd_pcm_uframes_t(periodFrames)
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir), "set_period_size_near")
        // Room for ~16 periods (~340 ms at 48 kHz): a busy Pi can be late without an overrun.
        var buffer = period * 16
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer), "set_buffer_size_near")
        try check(snd_pcm_hw_params(pcm, hw), "snd_pcm_hw_params")
        return (Int(rate), Int(period))
    }

    private static func setSoftware(_ pcm: OpaquePointer, device: String) throws {
        var sw: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&sw) == 0, let sw else {
            throw ALSAError(.ioError, "Out of memory setting up \"\(device)\".")
        }
        defer { snd_pcm_sw_params_free(sw) }
        var rc = snd_pcm_sw_params_current(pcm, sw)
        if rc == 0 { rc = snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE) }
        if rc == 0 { rc = snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC) }
        if rc == 0 { rc = snd_pcm_sw_params(pcm, sw) }
        // Without driver timestamps the chunk is dated with clock_gettime instead.
        _ = rc
    }

    /// The CLOCK_MONOTONIC time of the first of the `frames` just read: the status
    /// timestamp (or now, where the plugin gives none or a non-monotonic one)
    /// minus the frames still queued behind them, minus the chunk itself.
    static func firstSampleTime(_ pcm: OpaquePointer, status: OpaquePointer, frames: Int, rate: Int) -> MonotonicTime {
        let now = monotonicNow()
        var stamp = now
        var queued: Int64 = 0
        if snd_pcm_status(pcm, status) == 0 {
            var ts = snd_htimestamp_t()
            snd_pcm_status_get_htstamp(status, &ts)
            let ns = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
            if ns > 0 && abs(ns - now) < 1_000_000_000 { stamp = ns }
            queued = max(0, Int64(snd_pcm_status_get_delay(status)))
        }
        let behind = (queued + Int64(frames)) * 1_000_000_000 / Int64(rate)
        return MonotonicTime(nanoseconds: stamp - behind)
    }

    static func monotonicNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// The error that ends a stream mid-capture.
    static func gone(rc: Int32, device: String, during: String) -> ALSAError {
        switch -rc {
        case ENODEV, EBADFD, ENOTTY, EIO, ENXIO:
            return ALSAError(.deviceGone,
                             "The microphone \"\(device)\" went away while \(during) (\(ALSAError.text(rc))). "
                                + "Recording continues without audio; plug it back in for the next recording.",
                             errno: -rc)
        default:
            return ALSAError(.ioError,
                             "Capture from \"\(device)\" failed while \(during) (\(ALSAError.text(rc))). "
                                + "Recording continues without audio.", errno: -rc)
        }
    }
}
