import CShutterSys

/// An encoder's buffers (x264 at 1080p is ~100 MB) go back to malloc when a clip
/// ends; this hands the free pages back to the kernel so an idle camera stays
/// small (glibc's malloc_trim(0), through CShutterSys: <malloc.h> is not in
/// Swift's Glibc module). Call it off the actor, after the encoder is gone.
public func releaseFreedMemory() {
    shutter_release_free_memory()
}
