// SPDX-License-Identifier: BSD-2-Clause
// bench-recording: the recording benchmarks of issue 3, as JSON lines on stdout.
//   bench-recording [--only fast|realtime] [--seconds 60] [--trials 2] [--realtime-seconds 600] [--preset veryfast]
// fast:     recording_1080p30_60s, our encoder+muxer+audio as fast as it goes against the
//           ffmpeg CLI on the same raw frames with the same settings, peak RSS of both.
// preroll:  preroll_1080p30: idle with 3 s of pre-roll at real time (--preroll-seconds, default
//           --realtime-seconds) against pre-roll off: CPU % of one core, RSS, ring max vs its bound.
// realtime: realtime_1080p30, paced at real time: dropped frames, RSS growth from
//           minute 1 to the end (default 10 minutes), and the durable lag (max, median):
//           how far the newest frame is ahead of what the recorder reported synced, i.e.
//           what a power cut would lose, against one fragment (keyframe interval).
RecordingBench.main(Array(CommandLine.arguments.dropFirst()))
