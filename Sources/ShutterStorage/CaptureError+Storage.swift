// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The one storage-to-capture mapping: a full card (`StorageError.Code.full`,
/// which is ENOSPC or EDQUOT, or no file number left) is `storageFull`; every
/// other storage failure (missing, read-only, I/O) is `storageError`.
extension CaptureError {
    public init(_ error: StorageError) {
        self.init(error.code == .full ? .storageFull : .storageError, error.message)
    }
}

extension CaptureFault {
    /// The fault a failed storage check latches (see `CaptureError.init(_: StorageError)`).
    public init(_ error: StorageError) {
        self = CaptureError(error).code == .storageFull ? .storageFull : .storageError
    }
}
