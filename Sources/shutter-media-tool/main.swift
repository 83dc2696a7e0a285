// SPDX-License-Identifier: BSD-2-Clause
// shutter-media-tool: records synthetic frames + a tone at real-time pace into MP4, the
// way the service does (crash and signal tests kill it; also a quick demo).
//   shutter-media-tool record --out clip.mp4 [--seconds 10] [--size 640x360] [--fps 30]
//       [--segment 0] [--encoder libx264] [--preset veryfast] [--channels 1] [--stamp]
// --out may hold %d (segment number). SIGTERM/SIGINT finish the clip and exit 0.
// Prints `started <ns>` (clip start on CLOCK_MONOTONIC), `durable <frames> <ms>` each time
// a synced fragment makes more of the clip safe from a kill, and at the end a JSON summary.
//   shutter-media-tool timelapse --out film.mp4 [--fps 25] [--size WxH] [--stall-after N] PHOTO...
// makes a time-lapse film of the photos as `shutterctl timelapse` does (TimelapseTool.swift).

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "timelapse" { TimelapseTool.run(Array(arguments.dropFirst())) }
RecordTool.run(arguments)
