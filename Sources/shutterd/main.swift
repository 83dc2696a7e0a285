// SPDX-License-Identifier: BSD-2-Clause
// shutterd: the camera service. Everything lives in ShutterService.
import Foundation
import ShutterService

let code = await ShutterdCommand.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
