// SPDX-License-Identifier: BSD-2-Clause
import CALSA

/// A sound card as ALSA lists it (`arecord -l`).
public struct ALSACard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var id: String
    public var driver: String
    public var name: String
    /// PCM device numbers that can capture.
    public var captureDevices: [Int]

    public var isUSB: Bool { driver == "USB-Audio" }

    /// The name to open for capture, with ALSA's conversions (rate, channels).
    public var plugName: String? {
        captureDevices.first.map { "plughw:CARD=\(id),DEV=\($0)" }
    }

    public var description: String {
        let capture = captureDevices.isEmpty ? "no capture" : "capture \(captureDevices.map(String.init).joined(separator: ","))"
        return "card \(index) \(id) [\(name)] (\(driver), \(capture))"
    }
}

/// The sound cards of this machine, and "auto": the first USB capture card.
public enum ALSACaptureDevices {
    public static func list() -> [ALSACard] {
        var cards: [ALSACard] = []
        var index: Int32 = -1
        while snd_card_next(&index) == 0 && index >= 0 {
            if let card = describe(card: index) { cards.append(card) }
        }
        return cards
    }

    /// The device name for `auto`, or a noCaptureDevice error listing what is there.
    public static func firstUSBCapture() throws -> String {
        let cards = list()
        if let name = cards.first(where: { $0.isUSB && !$0.captureDevices.isEmpty })?.plugName { return name }
        let found = cards.isEmpty ? "no sound cards at all" : "cards: " + cards.map(\.description).joined(separator: ", ")
        throw ALSAError(.noCaptureDevice,
                        "No USB microphone found for audio device \"auto\" (\(found)). Plug one in, or set "
                            + "the audio device to \"default\" or \"plughw:CARD=...\" (see `arecord -l`).")
    }

    private static func describe(card: Int32) -> ALSACard? {
        var ctl: OpaquePointer?
        guard snd_ctl_open(&ctl, "hw:\(card)", 0) == 0, let ctl else { return nil }
        defer { snd_ctl_close(ctl) }
        var info: OpaquePointer?
        guard snd_ctl_card_info_malloc(&info) == 0, let info else { return nil }
        defer { snd_ctl_card_info_free(info) }
        guard snd_ctl_card_info(ctl, info) == 0 else { return nil }
        var result = ALSACard(index: Int(card), id: String(cString: snd_ctl_card_info_get_id(info)),
                              driver: String(cString: snd_ctl_card_info_get_driver(info)),
                              name: String(cString: snd_ctl_card_info_get_name(info)), captureDevices: [])
        var pcmInfo: OpaquePointer?
        guard snd_pcm_info_malloc(&pcmInfo) == 0, let pcmInfo else { return result }
        defer { snd_pcm_info_free(pcmInfo) }
        var device: Int32 = -1
        while snd_ctl_pcm_next_device(ctl, &device) == 0 && device >= 0 {
            snd_pcm_info_set_device(pcmInfo, UInt32(device))
            snd_pcm_info_set_subdevice(pcmInfo, 0)
            snd_pcm_info_set_stream(pcmInfo, SND_PCM_STREAM_CAPTURE)
            if snd_ctl_pcm_info(ctl, pcmInfo) == 0 { result.captureDevices.append(Int(device)) }
        }
        return result
    }
}
