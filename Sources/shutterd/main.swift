// shutterd: the camera service. Wiring lives in ShutterService.
import ShutterService
