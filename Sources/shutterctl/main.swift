// shutterctl: the control CLI. Commands live in ShutterService.
import Foundation
import ShutterService

exit(ShutterctlCommand.main(Array(CommandLine.arguments.dropFirst())))
