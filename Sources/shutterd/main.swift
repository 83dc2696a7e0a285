// SPDX-License-Identifier: BSD-2-Clause
// shutterd: the camera service. Everything lives in ShutterService.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterService

let code = await ShutterdCommand.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
