// SPDX-License-Identifier: BSD-2-Clause
// shutterctl: the control CLI. Commands live in ShutterControl, which links no camera,
// codec, GPIO, audio or HTTP library.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import ShutterControl

exit(ShutterctlCommand.main(Array(CommandLine.arguments.dropFirst())))
