// shutterctl: the control CLI. Commands live in ShutterService.
import ShutterService
