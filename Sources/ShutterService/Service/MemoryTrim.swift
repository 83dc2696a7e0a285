/// An encoder's buffers (x264 at 1080p is ~100 MB) go back to malloc when a clip
/// ends; hand the free pages back to the kernel so an idle camera stays small.
func releaseFreedMemory() {
    _ = glibcMallocTrim(0)
}

/// glibc's malloc_trim(3); <malloc.h> is not in Swift's Glibc module.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
