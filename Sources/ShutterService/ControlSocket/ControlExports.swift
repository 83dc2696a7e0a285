// SPDX-License-Identifier: BSD-2-Clause
// The service speaks the control protocol (ControlServer takes ControlRequest and answers
// ControlReply); it lives in ShutterControl so that shutterctl links none of the service's
// libraries. Re-exported so code that imports ShutterService sees those types as before.
@_exported import ShutterControl
