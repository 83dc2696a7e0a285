// SPDX-License-Identifier: BSD-2-Clause
// The libcamera shim: owns the CameraManager, cameras, allocators, requests and
// mappings; hands completed requests to Swift through an eventfd. Compiles
// against libcamera 0.0.3 (bookworm), 0.4 (trixie) and the Raspberry Pi fork
// 0.7.x; version drift is kept to the few #if blocks marked "drift".

#include "shutter_libcamera.h"

#include <libcamera/libcamera.h>
#include <libcamera/version.h>

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

using namespace libcamera;

#define SHC_STR2(x) #x
#define SHC_STR(x) SHC_STR2(x)

namespace {

// Converts any exception into -errno so nothing unwinds into Swift.
template <typename F>
int guarded(F &&body) noexcept
{
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

void copyString(char *dst, size_t cap, const std::string &src)
{
    size_t n = src.size() < cap - 1 ? src.size() : cap - 1;
    memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

// Looks a control up by name in what this camera supports: version-proof (no
// compile-time dependency on controls added or renamed between releases).
const ControlId *findControl(const ControlInfoMap &map, const char *name)
{
    for (const auto &entry : map) {
        if (std::string(entry.first->name()) == name)
            return entry.first;
    }
    return nullptr;
}

bool numericValue(const ControlValue &v, double *out)
{
    if (v.isNone() || v.isArray())
        return false;
    switch (v.type()) {
    case ControlTypeBool: *out = v.get<bool>() ? 1 : 0; return true;
    case ControlTypeByte: *out = v.get<uint8_t>(); return true;
    case ControlTypeInteger32: *out = v.get<int32_t>(); return true;
    case ControlTypeInteger64: *out = static_cast<double>(v.get<int64_t>()); return true;
    case ControlTypeFloat: *out = v.get<float>(); return true;
    default: return false;
    }
}

// A ControlValue of the control's own type from doubles; None when impossible.
ControlValue makeValue(const ControlId *id, const double *values, size_t count)
{
    if (count == 0)
        return ControlValue();
    switch (id->type()) {
    case ControlTypeBool:
        if (count == 1)
            return ControlValue(values[0] != 0);
        break;
    case ControlTypeInteger32: {
        if (count == 1)
            return ControlValue(static_cast<int32_t>(std::lround(values[0])));
        std::vector<int32_t> v;
        for (size_t i = 0; i < count; i++)
            v.push_back(static_cast<int32_t>(std::lround(values[i])));
        return ControlValue(Span<const int32_t>(v.data(), v.size()));
    }
    case ControlTypeInteger64: {
        if (count == 1)
            return ControlValue(static_cast<int64_t>(std::llround(values[0])));
        std::vector<int64_t> v;
        for (size_t i = 0; i < count; i++)
            v.push_back(static_cast<int64_t>(std::llround(values[i])));
        return ControlValue(Span<const int64_t>(v.data(), v.size()));
    }
    case ControlTypeFloat: {
        if (count == 1)
            return ControlValue(static_cast<float>(values[0]));
        std::vector<float> v;
        for (size_t i = 0; i < count; i++)
            v.push_back(static_cast<float>(values[i]));
        return ControlValue(Span<const float>(v.data(), v.size()));
    }
    case ControlTypeRectangle:
        // ScalerCrop: x, y, width, height. (AfWindows, an array, goes through shc_camera_set_af_windows.)
        if (count == 4 && values[2] > 0 && values[3] > 0)
            return ControlValue(Rectangle(static_cast<int>(std::lround(values[0])),
                                          static_cast<int>(std::lround(values[1])),
                                          static_cast<unsigned int>(std::lround(values[2])),
                                          static_cast<unsigned int>(std::lround(values[3]))));
        break;
    default:
        break;
    }
    return ControlValue();
}

// The mmaps of one started session. Shared by every frame handed out, so a
// frame held past stop(), reconfigure or close stays readable; unmapped with
// the last holder.
struct Mappings {
    std::vector<std::pair<void *, size_t>> regions;
    ~Mappings()
    {
        for (auto &r : regions)
            munmap(r.first, r.second);
    }
};

// One buffer's planes, mapped once at start.
struct MappedBuffer {
    FrameBuffer *buffer = nullptr;
    const uint8_t *plane[SHC_MAX_PLANES] = {};
    uint32_t length[SHC_MAX_PLANES] = {};
    uint32_t planes = 0;

    // One mapping per dmabuf (planes often share one with offsets); the
    // regions go to `mappings`. 0 or -errno.
    int map(FrameBuffer *b, Mappings &mappings)
    {
        buffer = b;
        std::map<int, size_t> spans;
        for (const FrameBuffer::Plane &p : b->planes()) {
            size_t end = static_cast<size_t>(p.offset) + p.length;
            if (spans[p.fd.get()] < end)
                spans[p.fd.get()] = end;
        }
        std::map<int, uint8_t *> bases;
        for (const auto &entry : spans) {
            void *base = mmap(nullptr, entry.second, PROT_READ, MAP_SHARED, entry.first, 0);
            if (base == MAP_FAILED)
                return -errno;
            mappings.regions.emplace_back(base, entry.second);
            bases[entry.first] = static_cast<uint8_t *>(base);
        }
        for (const FrameBuffer::Plane &p : b->planes()) {
            if (planes == SHC_MAX_PLANES)
                break;
            plane[planes] = bases[p.fd.get()] + p.offset;
            length[planes] = p.length;
            planes++;
        }
        return 0;
    }

    // The planes as completed: bytesused where the pipeline reports it.
    uint32_t fill(const uint8_t **data, uint32_t *lengths) const
    {
        const FrameMetadata &fm = buffer->metadata();
        size_t i = 0;
        for (const FrameMetadata::Plane &p : fm.planes()) { // drift: vector/span
            if (i >= planes)
                break;
            data[i] = plane[i];
            lengths[i] = p.bytesused > 0 && p.bytesused <= length[i] ? p.bytesused : length[i];
            i++;
        }
        for (; i < planes; i++) {
            data[i] = plane[i];
            lengths[i] = length[i];
        }
        return planes;
    }
};

// Count and bytes of one stream's allocated buffers (the planes' lengths added up).
shc_buffer_usage usageOf(const std::vector<std::unique_ptr<FrameBuffer>> &buffers)
{
    shc_buffer_usage u = {};
    u.count = static_cast<uint32_t>(buffers.size());
    if (!buffers.empty()) {
        for (const FrameBuffer::Plane &p : buffers.front()->planes()) { // drift: vector/span
            u.bytes_per_buffer += p.length;
            u.planes++;
        }
    }
    return u;
}

// A request and its buffers: the video stream's, and the still stream's when
// configured as a pair (both complete from the same sensor frame).
struct Slot {
    std::unique_ptr<Request> request;
    MappedBuffer video;
    MappedBuffer still;
    uint64_t afCycle = 0;
};

struct CameraState;

// What a handed-out frame carries back to shc_frame_release.
struct Token {
    std::shared_ptr<CameraState> state;
    std::shared_ptr<Mappings> mappings;
    uint64_t generation;
    size_t slot;
};

} // namespace

struct shc_manager {
    std::unique_ptr<CameraManager> cm;
    int refs = 0;
};

namespace {

std::mutex gManagerMutex; // guards gManager and its refs
shc_manager *gManager = nullptr;

// Everything one open camera owns. Outlives shc_camera_close while frames are
// still held (tokens keep it), but all libcamera objects are gone by then.
struct CameraState {
    // Lock order: lifecycleMutex -> stateMutex -> queueMutex.
    //
    // lifecycleMutex serializes the calls that create or destroy libcamera
    // objects (configure, start, stop, close); it is held across the slow
    // Camera::stop(). Nothing a frame or the completion handler does takes it.
    std::mutex lifecycleMutex;
    // stateMutex guards every field below up to queueMutex, and is only held
    // for short sections: never across Camera::stop() (see stopLocked), so
    // releasing a frame never waits for a mode switch. Never taken by the
    // libcamera completion handler, since Camera::stop() blocks on libcamera's
    // thread while that thread emits requestCompleted.
    std::mutex stateMutex;
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    Stream *stream = nullptr;
    Stream *stillStream = nullptr; // the pair's still stream, else null
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<Slot> slots;
    std::shared_ptr<Mappings> mappings;
    std::unique_ptr<ControlList> persistent;
    std::unique_ptr<ControlList> pending;
    bool running = false;
    bool closed = false;
    uint64_t generation = 0;
    uint64_t afCycles = 0;
    uint64_t requeueErrors = 0;
    // What the last successful start allocated (zeroed at every start).
    shc_buffer_usage videoUsage = {};
    shc_buffer_usage stillUsage = {};

    // queueMutex guards `completed` only: the libcamera thread's whole job is
    // to push here and write the eventfd.
    std::mutex queueMutex;
    std::deque<Request *> completed;

    // `generation` while running, 0 otherwise (sessions count from 1): a frame
    // of any other session is released without taking stateMutex.
    std::atomic<uint64_t> liveGeneration{ 0 };
    std::atomic<bool> stopping{ false };
    std::atomic<bool> disconnected{ false };
    std::atomic<uint64_t> completedCount{ 0 };
    std::atomic<uint64_t> cancelledWhileRunning{ 0 };
    std::atomic<uint64_t> failedCount{ 0 };
    int efd = -1;

    ~CameraState()
    {
        if (efd >= 0)
            close(efd);
    }

    void signal()
    {
        uint64_t one = 1;
        ssize_t r;
        do {
            r = write(efd, &one, sizeof(one));
        } while (r < 0 && errno == EINTR);
    }

    // libcamera's thread: queue and signal, nothing else.
    void onRequestCompleted(Request *request)
    {
        if (stopping.load())
            return;
        {
            std::lock_guard<std::mutex> lock(queueMutex);
            completed.push_back(request);
        }
        signal();
    }

    void onDisconnected()
    {
        disconnected.store(true);
        signal();
    }

    // Caller holds stateMutex. Pending one-shot controls go to this request.
    // The largest ScalerCrop of the configured mode: the ScalerCrop control's
    // maximum where the pipeline keeps it per mode (what rpicam-apps reads
    // now), else ScalerCropMaximum, else the pixel array. Placeholders outside
    // the pixel array (older Raspberry Pi IPAs) are skipped for the property.
    // Caller holds stateMutex; the camera is open.
    bool cropMaximum(Rectangle *out) const
    {
        const ControlList &props = camera->properties();
        auto size = props.get(properties::PixelArraySize);
        const ControlInfoMap &map = camera->controls();
        const ControlId *crop = findControl(map, "ScalerCrop");
        const ControlValue *max = crop ? &map.at(crop).max() : nullptr;
        if (max && !max->isNone() && !max->isArray() && max->type() == ControlTypeRectangle &&
            !max->get<Rectangle>().isNull() && size &&
            max->get<Rectangle>().boundedTo(Rectangle(0, 0, size->width, size->height)) == max->get<Rectangle>())
            *out = max->get<Rectangle>();
        else if (auto maximum = props.get(properties::ScalerCropMaximum))
            *out = *maximum;
        else if (size)
            *out = Rectangle(0, 0, size->width, size->height);
        else
            return false;
        return true;
    }

    int queueLocked(Slot &slot)
    {
        uint64_t cycle = afCycles;
        if (pending && !pending->empty()) {
            for (const auto &entry : *pending) {
                if (entry.first == controls::AfTrigger.id() &&
                    entry.second.type() == ControlTypeInteger32 &&
                    entry.second.get<int32_t>() == controls::AfTriggerStart)
                    cycle = ++afCycles;
                slot.request->controls().set(entry.first, entry.second);
            }
            pending->clear();
        }
        slot.afCycle = cycle;
        return camera->queueRequest(slot.request.get());
    }

    // Caller holds lifecycleMutex and `lock` (on stateMutex), and holds both
    // again on return. Order: stop -> requests -> allocator.
    //
    // The session ends first (running, generation), so a frame released from
    // here on only drops its mapping reference; then stateMutex is let go
    // while Camera::stop() waits for libcamera to cancel every request (a
    // whole mode switch on a Pi), and while requests and buffers are freed.
    // The objects stay valid meanwhile: only configure/start/stop/close touch
    // them, and those hold lifecycleMutex.
    void stopLocked(std::unique_lock<std::mutex> &lock)
    {
        bool wasRunning = running;
        running = false;
        liveGeneration.store(0);
        generation++;
        if (wasRunning) {
            stopping.store(true);
            lock.unlock();
            camera->stop();
            lock.lock();
        }
        {
            std::lock_guard<std::mutex> qlock(queueMutex);
            completed.clear();
        }
        std::vector<Slot> oldSlots = std::move(slots);
        slots.clear();
        std::unique_ptr<FrameBufferAllocator> oldAllocator = std::move(allocator);
        Stream *oldStream = stream;
        Stream *oldStill = stillStream;
        mappings.reset();
        stopping.store(false);
        lock.unlock();
        oldSlots.clear();
        if (oldAllocator && oldStream)
            oldAllocator->free(oldStream);
        if (oldAllocator && oldStill)
            oldAllocator->free(oldStill);
        oldAllocator.reset();
        lock.lock();
    }
};

} // namespace

struct shc_camera {
    std::shared_ptr<CameraState> state;
    shc_manager *manager = nullptr;
};

extern "C" {

const char *shc_libcamera_header_version(void)
{
    return SHC_STR(LIBCAMERA_VERSION_MAJOR) "." SHC_STR(LIBCAMERA_VERSION_MINOR) "." SHC_STR(
        LIBCAMERA_VERSION_PATCH);
}

int shc_manager_acquire(shc_manager **out)
{
    if (!out)
        return -EINVAL;
    return guarded([&] {
        std::lock_guard<std::mutex> lock(gManagerMutex);
        if (!gManager) {
            auto m = std::make_unique<shc_manager>();
            m->cm = std::make_unique<CameraManager>();
            int ret = m->cm->start();
            if (ret < 0)
                return ret;
            gManager = m.release();
        }
        gManager->refs++;
        *out = gManager;
        return 0;
    });
}

void shc_manager_release(shc_manager *m)
{
    if (!m)
        return;
    guarded([&] {
        std::lock_guard<std::mutex> lock(gManagerMutex);
        if (m != gManager || --m->refs > 0)
            return 0;
        m->cm->stop();
        m->cm.reset();
        delete m;
        gManager = nullptr;
        return 0;
    });
}

const char *shc_manager_library_version(shc_manager *m)
{
    if (!m)
        return "";
    // Copied once: version() is a std::string in some releases and may become
    // a string_view; the copy keeps a stable NUL-terminated pointer.
    static const std::string version(CameraManager::version());
    return version.c_str();
}

int shc_manager_cameras(shc_manager *m, shc_camera_info *out, size_t capacity)
{
    if (!m || (capacity > 0 && !out))
        return -EINVAL;
    return guarded([&] {
        std::vector<std::shared_ptr<Camera>> cams = m->cm->cameras();
        for (size_t i = 0; i < cams.size() && i < capacity; i++) {
            const std::shared_ptr<Camera> &cam = cams[i];
            shc_camera_info &info = out[i];
            memset(&info, 0, sizeof(info));
            copyString(info.id, sizeof(info.id), std::string(cam->id()));
            const ControlList &props = cam->properties();
            // drift: string properties are std::string before 0.6, string_view after.
            if (auto model = props.get(properties::Model))
                copyString(info.model, sizeof(info.model), std::string(*model));
            auto location = props.get(properties::Location);
            info.location = location ? *location : SHC_LOCATION_UNKNOWN;
            auto rotation = props.get(properties::Rotation);
            info.rotation = rotation ? *rotation : -1;
            if (auto size = props.get(properties::PixelArraySize)) {
                info.pixel_array_width = static_cast<int32_t>(size->width);
                info.pixel_array_height = static_cast<int32_t>(size->height);
            }
            const ControlInfoMap &ctrls = cam->controls();
            info.has_autofocus = findControl(ctrls, "AfMode") != nullptr;
            info.lens_position_min = info.lens_position_max = info.lens_position_default = NAN;
            if (const ControlId *lp = findControl(ctrls, "LensPosition")) {
                info.has_lens_position = 1;
                const ControlInfo &ci = ctrls.at(lp);
                double v;
                if (numericValue(ci.min(), &v))
                    info.lens_position_min = static_cast<float>(v);
                if (numericValue(ci.max(), &v))
                    info.lens_position_max = static_cast<float>(v);
                if (numericValue(ci.def(), &v))
                    info.lens_position_default = static_cast<float>(v);
            }
        }
        return static_cast<int>(cams.size());
    });
}

int shc_camera_open(shc_manager *m, const char *id, shc_camera **out)
{
    if (!m || !id || !out)
        return -EINVAL;
    return guarded([&] {
        std::shared_ptr<Camera> cam = m->cm->get(id);
        if (!cam)
            return -ENODEV;
        int ret = cam->acquire();
        if (ret < 0)
            return ret;
        auto state = std::make_shared<CameraState>();
        state->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (state->efd < 0) {
            int e = errno;
            cam->release();
            return -e;
        }
        state->camera = cam;
        state->persistent = std::make_unique<ControlList>(controls::controls);
        state->pending = std::make_unique<ControlList>(controls::controls);
        CameraState *raw = state.get();
        cam->requestCompleted.connect(raw, &CameraState::onRequestCompleted);
        cam->disconnected.connect(raw, &CameraState::onDisconnected);

        shc_manager *ref = nullptr;
        shc_manager_acquire(&ref); // the camera's own reference on the manager
        auto handle = std::make_unique<shc_camera>();
        handle->state = state;
        handle->manager = ref;
        *out = handle.release();
        return 0;
    });
}

void shc_camera_close(shc_camera *c)
{
    if (!c)
        return;
    guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> life(s.lifecycleMutex);
        std::unique_lock<std::mutex> lock(s.stateMutex);
        if (!s.closed) {
            s.stopLocked(lock);
            s.camera->requestCompleted.disconnect(&s);
            s.camera->disconnected.disconnect(&s);
            s.config.reset();
            s.stream = nullptr;
            s.camera->release();
            s.camera.reset();
            s.closed = true;
        }
        return 0;
    });
    shc_manager_release(c->manager);
    delete c;
}

int shc_camera_event_fd(shc_camera *c)
{
    return c ? c->state->efd : -EINVAL;
}

void shc_camera_consume_event(shc_camera *c)
{
    if (!c)
        return;
    uint64_t v;
    ssize_t r;
    do {
        r = read(c->state->efd, &v, sizeof(v));
    } while (r < 0 && errno == EINTR);
}

} // extern "C"

namespace {

Transform requestedTransform(const shc_stream_request *req)
{
    Transform transform = Transform::Identity;
    if (req->rotation == 180)
        transform = Transform::Rot180;
    if (req->hflip)
        transform = transform ^ Transform::HFlip;
    if (req->vflip)
        transform = transform ^ Transform::VFlip;
    return transform;
}

void setTransform(CameraConfiguration &config, Transform transform)
{
#if LIBCAMERA_VERSION_MAJOR == 0 && LIBCAMERA_VERSION_MINOR < 2
    config.transform = transform; // drift: `transform` until 0.1
#else
    config.orientation = Orientation::Rotate0 * transform; // 0.2+
#endif
}

bool transformGranted(const CameraConfiguration &config, Transform transform)
{
#if LIBCAMERA_VERSION_MAJOR == 0 && LIBCAMERA_VERSION_MINOR < 2
    return config.transform == transform;
#else
    return config.orientation == Orientation::Rotate0 * transform;
#endif
}

std::vector<Size> requestedSizes(const shc_stream_request *req)
{
    std::vector<Size> sizes;
    for (size_t i = 0; i < req->size_count; i++)
        sizes.emplace_back(req->sizes[i].width, req->sizes[i].height);
    if (sizes.empty())
        sizes.emplace_back(0, 0); // the pipeline's default for the role
    return sizes;
}

std::vector<uint32_t> requestedFourccs(const shc_stream_request *req)
{
    std::vector<uint32_t> fourccs(req->fourccs, req->fourccs + req->fourcc_count);
    if (fourccs.empty())
        fourccs.push_back(0);
    return fourccs;
}

void describe(const StreamConfiguration &got, bool exact, bool transformOK, shc_stream_info *out)
{
    memset(out, 0, sizeof(*out));
    out->width = got.size.width;
    out->height = got.size.height;
    out->stride = got.stride;
    out->frame_size = got.frameSize;
    out->fourcc = got.pixelFormat.fourcc();
    out->buffer_count = got.bufferCount;
    out->exact = exact;
    out->transform_granted = transformOK;
    copyString(out->description, sizeof(out->description), got.toString());
}

// The sizes a stream's formats list, for the formats in `fourccs` (all when
// empty): StreamFormats::sizes() (discrete sizes, or the common sizes inside a
// range), plus a single range's two ends, which the common list may lack (the
// virtual camera's 4608x2592). Largest first, distinct.
std::vector<Size> listedSizes(const StreamFormats &formats, const std::vector<uint32_t> &fourccs)
{
    std::vector<Size> sizes;
    auto add = [&](const Size &size) {
        if (!size.isNull() && std::find(sizes.begin(), sizes.end(), size) == sizes.end())
            sizes.push_back(size);
    };
    for (const PixelFormat &pf : formats.pixelformats()) {
        if (!fourccs.empty() && std::find(fourccs.begin(), fourccs.end(), pf.fourcc()) == fourccs.end())
            continue;
        std::vector<Size> listed = formats.sizes(pf);
        for (const Size &size : listed)
            add(size);
        // A range (sizes() made the list from it): its ends are sizes the stream gives.
        SizeRange range = formats.range(pf);
        if (range.min != range.max && (listed.empty() || listed.front() != range.min || listed.back() != range.max)) {
            add(range.min);
            add(range.max);
        }
    }
    std::sort(sizes.begin(), sizes.end(), [](const Size &a, const Size &b) {
        uint64_t aa = static_cast<uint64_t>(a.width) * a.height, ba = static_cast<uint64_t>(b.width) * b.height;
        return aa != ba ? aa > ba : a.width > b.width;
    });
    return sizes;
}

int copySizes(const std::vector<Size> &sizes, shc_size *out, size_t capacity)
{
    for (size_t i = 0; i < sizes.size() && i < capacity; i++) {
        out[i].width = sizes[i].width;
        out[i].height = sizes[i].height;
    }
    return static_cast<int>(sizes.size());
}

// The one-stream choice, validated but not applied. The seeds' fallback: the
// first preference (size outer, format inner) granted exactly wins; failing
// all, the first valid one as the pipeline adjusted it. Null when none is valid.
std::unique_ptr<CameraConfiguration> chooseSingle(Camera &camera, const shc_stream_request *req,
                                                  Transform transform, bool *exact)
{
    StreamRole role = req->role == SHC_ROLE_STILL ? StreamRole::StillCapture : StreamRole::VideoRecording;
    std::vector<Size> sizes = requestedSizes(req);
    std::vector<uint32_t> fourccs = requestedFourccs(req);
    std::unique_ptr<CameraConfiguration> fallback;
    std::unique_ptr<CameraConfiguration> anyValid; // reported, Swift explains the format
    *exact = false;
    for (size_t si = 0; si < sizes.size(); si++) {
        for (size_t fi = 0; fi < fourccs.size(); fi++) {
            // drift: StreamRoles is a vector before 0.2 and a span after;
            // an initializer list works with both.
            std::unique_ptr<CameraConfiguration> config = camera.generateConfiguration({ role });
            if (!config || config->empty())
                return nullptr;
            StreamConfiguration &sc = config->at(0);
            bool anySize = !(sizes[si].width && sizes[si].height);
            if (!anySize)
                sc.size = sizes[si];
            if (fourccs[fi])
                sc.pixelFormat = PixelFormat(fourccs[fi]);
            if (req->buffer_count)
                sc.bufferCount = req->buffer_count;
            setTransform(*config, transform);
            if (config->validate() == CameraConfiguration::Invalid)
                continue;
            const StreamConfiguration &got = config->at(0);
            bool sizeOK = anySize || got.size == sizes[si];
            bool formatOK = !fourccs[fi] || got.pixelFormat == PixelFormat(fourccs[fi]);
            // A fallback must still be in a format the caller can read
            // (a webcam may adjust everything to MJPEG).
            bool usable = !fourccs[0];
            for (uint32_t f : fourccs)
                usable = usable || (f && got.pixelFormat == PixelFormat(f));
            if (sizeOK && formatOK) {
                *exact = si == 0 && fi == 0;
                return config;
            } else if (usable && !fallback) {
                fallback = std::move(config);
            } else if (!anyValid) {
                anyValid = std::move(config);
            }
        }
    }
    return fallback ? std::move(fallback) : std::move(anyValid);
}

// Video as chosen alone plus a still stream (VideoRecording + StillCapture in
// one configuration): the first still preference the pipeline grants exactly
// while leaving the video stream as it was. Null with *result ONE_STREAM when
// the pipeline makes or keeps only one stream (vimc truncates to one), or
// NOT_GRANTED when no still preference fits beside the video.
std::unique_ptr<CameraConfiguration> choosePair(Camera &camera, const StreamConfiguration &video,
                                                const shc_stream_request *still, Transform transform,
                                                int32_t *result)
{
    std::vector<Size> sizes = requestedSizes(still);
    std::vector<uint32_t> fourccs = requestedFourccs(still);
    *result = SHC_STILL_NOT_GRANTED;
    for (const Size &size : sizes) {
        for (uint32_t fourcc : fourccs) {
            // drift: as in chooseSingle; the video stream first, so its colour
            // space is the one both YUV outputs get (validateColorSpaces).
            std::unique_ptr<CameraConfiguration> config =
                camera.generateConfiguration({ StreamRole::VideoRecording, StreamRole::StillCapture });
            if (!config || config->size() < 2) {
                *result = SHC_STILL_ONE_STREAM;
                return nullptr;
            }
            StreamConfiguration &v = config->at(0);
            v.size = video.size;
            v.pixelFormat = video.pixelFormat;
            v.bufferCount = video.bufferCount;
            StreamConfiguration &sc = config->at(1);
            if (size.width && size.height)
                sc.size = size;
            if (fourcc)
                sc.pixelFormat = PixelFormat(fourcc);
            sc.bufferCount = video.bufferCount; // a request holds one buffer of each
            setTransform(*config, transform);
            if (config->validate() == CameraConfiguration::Invalid)
                continue;
            if (config->size() < 2) {
                *result = SHC_STILL_ONE_STREAM;
                return nullptr;
            }
            const StreamConfiguration &gv = config->at(0), &gs = config->at(1);
            bool videoKept = gv.size == video.size && gv.pixelFormat == video.pixelFormat;
            bool stillOK = (!(size.width && size.height) || gs.size == size) &&
                           (!fourcc || gs.pixelFormat == PixelFormat(fourcc));
            if (videoKept && stillOK) {
                *result = SHC_STILL_GRANTED;
                return config;
            }
        }
    }
    return nullptr;
}

} // namespace

extern "C" {

int shc_camera_configure(shc_camera *c, const shc_stream_request *req, shc_stream_info *out)
{
    int32_t result = 0;
    shc_stream_info unused;
    return shc_camera_configure_pair(c, req, nullptr, out, &unused, &result);
}

int shc_camera_configure_pair(shc_camera *c, const shc_stream_request *video, const shc_stream_request *still,
                              shc_stream_info *video_out, shc_stream_info *still_out, int32_t *still_result)
{
    if (!c || !video || !video_out || (still && (!still_out || !still_result)))
        return -EINVAL;
    if (video->rotation != 0 && video->rotation != 180)
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> life(s.lifecycleMutex);
        std::unique_lock<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        if (s.running)
            return -EBUSY;
        // Buffers of the previous configuration go before configure().
        s.stopLocked(lock);

        Transform transform = requestedTransform(video);
        bool exact = false;
        std::unique_ptr<CameraConfiguration> chosen = chooseSingle(*s.camera, video, transform, &exact);
        if (!chosen)
            return -EINVAL;
        std::unique_ptr<CameraConfiguration> pair;
        if (still) {
            pair = choosePair(*s.camera, chosen->at(0), still, transform, still_result);
            if (pair)
                chosen = std::move(pair);
        }

        int ret = s.camera->configure(chosen.get());
        if (ret < 0)
            return ret;
        bool transformOK = transformGranted(*chosen, transform);
        describe(chosen->at(0), exact, transformOK, video_out);
        s.stream = chosen->at(0).stream();
        s.stillStream = nullptr;
        if (still_out)
            memset(still_out, 0, sizeof(*still_out));
        if (chosen->size() > 1) {
            describe(chosen->at(1), true, transformOK, still_out);
            s.stillStream = chosen->at(1).stream();
        }
        s.config = std::move(chosen);
        return 0;
    });
}

int shc_camera_sensor_sizes(shc_camera *c, shc_size *out, size_t capacity)
{
    if (!c || (capacity > 0 && !out))
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        // Only where a sensor is behind the camera: pipelines without one (virtual)
        // have no Raw role and log an ERROR when asked for it.
        if (!s.camera->properties().get(properties::PixelArraySize))
            return 0;
        std::unique_ptr<CameraConfiguration> config = s.camera->generateConfiguration({ StreamRole::Raw });
        if (!config || config->empty())
            return 0;
        // Discrete sizes per raw format (the sensor modes).
        return copySizes(listedSizes(config->at(0).formats(), {}), out, capacity);
    });
}

int shc_camera_stream_sizes(shc_camera *c, const shc_stream_request *req, shc_size *out, size_t capacity)
{
    if (!c || !req || (capacity > 0 && !out))
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        StreamRole role = req->role == SHC_ROLE_STILL ? StreamRole::StillCapture : StreamRole::VideoRecording;
        // drift: as in chooseSingle.
        std::unique_ptr<CameraConfiguration> config = s.camera->generateConfiguration({ role });
        if (!config || config->empty())
            return 0;
        std::vector<uint32_t> fourccs(req->fourccs, req->fourccs + req->fourcc_count);
        return copySizes(listedSizes(config->at(0).formats(), fourccs), out, capacity);
    });
}

int shc_camera_buffer_usage(shc_camera *c, shc_buffer_usage *video, shc_buffer_usage *still)
{
    if (!c || !video || !still)
        return -EINVAL;
    CameraState &s = *c->state;
    std::lock_guard<std::mutex> lock(s.stateMutex);
    *video = s.videoUsage;
    *still = s.stillUsage;
    return 0;
}

int shc_camera_start(shc_camera *c)
{
    if (!c)
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> life(s.lifecycleMutex);
        std::unique_lock<std::mutex> lock(s.stateMutex);
        if (s.closed || s.disconnected.load())
            return -ENODEV;
        if (s.running)
            return 0;
        if (!s.stream)
            return -EINVAL; // configure first

        s.videoUsage = {};
        s.stillUsage = {};
        s.allocator = std::make_unique<FrameBufferAllocator>(s.camera);
        int ret = s.allocator->allocate(s.stream);
        if (ret >= 0 && s.stillStream)
            ret = s.allocator->allocate(s.stillStream);
        if (ret < 0) {
            // Whatever the allocator's own errno (a DMA heap's ENOMEM, udmabuf's
            // EINVAL over its size limit): the buffers did not fit.
            s.stopLocked(lock);
            return -ENOMEM;
        }
        auto mappings = std::make_shared<Mappings>();
        std::vector<Slot> slots;
        const auto &buffers = s.allocator->buffers(s.stream);
        // A pair's request holds a buffer of each stream: as many requests as the fewer.
        size_t count = buffers.size();
        if (s.stillStream && s.allocator->buffers(s.stillStream).size() < count)
            count = s.allocator->buffers(s.stillStream).size();
        for (size_t i = 0; i < count; i++) {
            Slot slot;
            slot.request = s.camera->createRequest(i);
            FrameBuffer *still = s.stillStream ? s.allocator->buffers(s.stillStream)[i].get() : nullptr;
            if (!slot.request || slot.request->addBuffer(s.stream, buffers[i].get()) < 0 ||
                (still && slot.request->addBuffer(s.stillStream, still) < 0)) {
                s.stopLocked(lock);
                return -ENOMEM;
            }
            // Mapped once here, never per frame.
            ret = slot.video.map(buffers[i].get(), *mappings);
            if (ret >= 0 && still)
                ret = slot.still.map(still, *mappings);
            if (ret < 0) {
                s.stopLocked(lock);
                return ret;
            }
            slots.push_back(std::move(slot));
        }
        s.slots = std::move(slots);
        s.mappings = mappings;
        s.videoUsage = usageOf(s.allocator->buffers(s.stream));
        if (s.stillStream)
            s.stillUsage = usageOf(s.allocator->buffers(s.stillStream));

        ret = s.camera->start(s.persistent->empty() ? nullptr : s.persistent.get());
        if (ret < 0) {
            s.stopLocked(lock);
            s.videoUsage = {};
            s.stillUsage = {};
            return ret;
        }
        s.running = true;
        s.generation++;
        s.liveGeneration.store(s.generation);
        for (Slot &slot : s.slots) {
            ret = s.queueLocked(slot);
            if (ret < 0) {
                s.stopLocked(lock);
                return ret;
            }
        }
        return 0;
    });
}

int shc_camera_stop(shc_camera *c)
{
    if (!c)
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> life(s.lifecycleMutex);
        std::unique_lock<std::mutex> lock(s.stateMutex);
        if (!s.closed)
            s.stopLocked(lock);
        return 0;
    });
}

int shc_camera_next_frame(shc_camera *c, shc_frame *out)
{
    if (!c || !out)
        return -EINVAL;
    return guarded([&] {
        std::shared_ptr<CameraState> state = c->state;
        CameraState &s = *state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        for (;;) {
            Request *request = nullptr;
            {
                std::lock_guard<std::mutex> qlock(s.queueMutex);
                if (!s.completed.empty()) {
                    request = s.completed.front();
                    s.completed.pop_front();
                }
            }
            if (!request)
                return s.disconnected.load() ? -ENODEV : -EAGAIN;
            if (!s.running)
                continue;
            size_t index = static_cast<size_t>(request->cookie());
            if (index >= s.slots.size() || s.slots[index].request.get() != request)
                continue;
            Slot &slot = s.slots[index];
            FrameBuffer *buffer = slot.video.buffer;
            bool cancelled = request->status() == Request::RequestCancelled;
            bool failed = !cancelled && buffer->metadata().status != FrameMetadata::FrameSuccess;
            if (cancelled || failed) {
                // A cancelled request while running means the pipeline gave
                // up on a frame: a camera timeout for the watchdog.
                if (cancelled)
                    s.cancelledWhileRunning++;
                else
                    s.failedCount++;
                slot.request->reuse(Request::ReuseBuffers);
                if (s.queueLocked(slot) < 0)
                    s.requeueErrors++;
                continue;
            }
            s.completedCount++;

            memset(out, 0, sizeof(*out));
            const FrameMetadata &fm = buffer->metadata();
            out->plane_count = slot.video.fill(out->plane_data, out->plane_length);
            // The still buffer of the same request; a failed one only leaves the video frame.
            if (slot.still.buffer && slot.still.buffer->metadata().status == FrameMetadata::FrameSuccess)
                out->still_plane_count = slot.still.fill(out->still_plane_data, out->still_plane_length);
            out->sequence = fm.sequence;
            out->timestamp_ns = static_cast<int64_t>(fm.timestamp);
            out->af_cycle = slot.afCycle;

            // drift: metadata() is const from 0.7; a const reference reads both.
            const ControlList &md = request->metadata();
            if (auto v = md.get(controls::SensorTimestamp))
                out->timestamp_ns = *v;
            if (auto v = md.get(controls::ExposureTime)) {
                out->has_exposure_time = 1;
                out->exposure_time_us = *v;
            }
            if (auto v = md.get(controls::AnalogueGain)) {
                out->has_analogue_gain = 1;
                out->analogue_gain = *v;
            }
            if (auto v = md.get(controls::DigitalGain)) {
                out->has_digital_gain = 1;
                out->digital_gain = *v;
            }
            if (auto v = md.get(controls::Lux)) {
                out->has_lux = 1;
                out->lux = *v;
            }
            if (auto v = md.get(controls::ColourTemperature)) {
                out->has_colour_temperature = 1;
                out->colour_temperature = *v;
            }
            if (auto v = md.get(controls::AfState)) {
                out->has_af_state = 1;
                out->af_state = *v;
            }
            if (auto v = md.get(controls::LensPosition)) {
                out->has_lens_position = 1;
                out->lens_position = *v;
            }
            if (auto v = md.get(controls::ColourGains)) {
                out->has_colour_gains = 1;
                out->colour_gains[0] = (*v)[0];
                out->colour_gains[1] = (*v)[1];
            }
            if (auto v = md.get(controls::ExposureValue)) {
                out->has_exposure_value = 1;
                out->exposure_value = *v;
            }
            if (auto v = md.get(controls::AwbEnable)) {
                out->has_awb_enable = 1;
                out->awb_enable = *v ? 1 : 0;
            }
            if (auto v = md.get(controls::ScalerCrop)) {
                out->has_scaler_crop = 1;
                out->scaler_crop[0] = v->x;
                out->scaler_crop[1] = v->y;
                out->scaler_crop[2] = static_cast<int32_t>(v->width);
                out->scaler_crop[3] = static_cast<int32_t>(v->height);
                // What the crop is a part of, for the zoom ratio.
                Rectangle max;
                if (s.cropMaximum(&max)) {
                    out->scaler_crop_maximum[0] = max.x;
                    out->scaler_crop_maximum[1] = max.y;
                    out->scaler_crop_maximum[2] = static_cast<int32_t>(max.width);
                    out->scaler_crop_maximum[3] = static_cast<int32_t>(max.height);
                }
            }
            out->token = new Token{ state, s.mappings, s.generation, index };
            return 0;
        }
    });
}

void shc_frame_release(void *token)
{
    if (!token)
        return;
    guarded([&] {
        std::unique_ptr<Token> t(static_cast<Token *>(token));
        CameraState &s = *t->state;
        // A frame of an older session (stopping, stopped, reconfigured,
        // closed) only drops its mapping reference, without a lock: it never
        // waits for a stop, which holds lifecycleMutex across Camera::stop().
        if (t->generation != s.liveGeneration.load())
            return 0;
        // Short sections only: a stop that began meanwhile ended the session
        // under this mutex before letting it go, which the check below sees.
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed || !s.running || t->generation != s.generation || t->slot >= s.slots.size())
            return 0;
        Slot &slot = s.slots[t->slot];
        slot.request->reuse(Request::ReuseBuffers);
        if (s.queueLocked(slot) < 0)
            s.requeueErrors++;
        return 0;
    });
}

void shc_camera_counters(shc_camera *c, shc_counters *out)
{
    if (!c || !out)
        return;
    CameraState &s = *c->state;
    memset(out, 0, sizeof(*out));
    out->completed = s.completedCount.load();
    out->cancelled_while_running = s.cancelledWhileRunning.load();
    out->failed = s.failedCount.load();
    out->disconnected = s.disconnected.load();
    std::lock_guard<std::mutex> lock(s.stateMutex);
    out->requeue_errors = s.requeueErrors;
    out->running = s.running;
}

int shc_camera_has_control(shc_camera *c, const char *name)
{
    if (!c || !name)
        return 0;
    int r = guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return 0;
        return findControl(s.camera->controls(), name) ? 1 : 0;
    });
    return r > 0 ? 1 : 0;
}

int shc_camera_control_range(shc_camera *c, const char *name, double *min, double *max, double *def)
{
    if (!c || !name || !min || !max || !def)
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        const ControlInfoMap &map = s.camera->controls();
        const ControlId *id = findControl(map, name);
        if (!id)
            return -ENOTSUP;
        const ControlInfo &info = map.at(id);
        *min = *max = *def = NAN;
        if (!numericValue(info.min(), min) || !numericValue(info.max(), max))
            return -ENOTSUP;
        numericValue(info.def(), def);
        return 0;
    });
}

int shc_camera_set_control(shc_camera *c, const char *name, const double *values, size_t count,
                           int32_t persistence)
{
    if (!c || !name || (count > 0 && !values))
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        const ControlId *id = findControl(s.camera->controls(), name);
        if (!id)
            return -ENOTSUP;
        ControlValue value = makeValue(id, values, count);
        if (value.isNone())
            return -EINVAL;
        if (persistence == SHC_CONTROL_PERSISTENT)
            s.persistent->set(id->id(), value);
        s.pending->set(id->id(), value);
        return 0;
    });
}

int shc_camera_set_af_windows(shc_camera *c, const int32_t *rects, size_t count)
{
    if (!c || (count > 0 && !rects))
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        const ControlInfoMap &map = s.camera->controls();
        if (!findControl(map, "AfWindows") || !findControl(map, "AfMetering"))
            return -ENOTSUP;
        std::vector<Rectangle> windows;
        for (size_t i = 0; i < count; i++) {
            const int32_t *r = rects + 4 * i;
            if (r[2] <= 0 || r[3] <= 0)
                return -EINVAL;
            windows.emplace_back(r[0], r[1], static_cast<unsigned>(r[2]), static_cast<unsigned>(r[3]));
        }
        int32_t metering = windows.empty() ? controls::AfMeteringAuto : controls::AfMeteringWindows;
        for (ControlList *list : { s.persistent.get(), s.pending.get() }) {
            list->set(controls::AfMetering.id(), ControlValue(metering));
            if (!windows.empty())
                list->set(controls::AfWindows.id(),
                          ControlValue(Span<const Rectangle>(windows.data(), windows.size())));
        }
        return 0;
    });
}

int shc_camera_crop_maximum(shc_camera *c, int32_t *x, int32_t *y, int32_t *width, int32_t *height)
{
    if (!c || !x || !y || !width || !height)
        return -EINVAL;
    return guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        Rectangle r;
        if (!s.cropMaximum(&r))
            return -ENOTSUP;
        *x = r.x;
        *y = r.y;
        *width = static_cast<int32_t>(r.width);
        *height = static_cast<int32_t>(r.height);
        return 0;
    });
}

int64_t shc_camera_af_trigger(shc_camera *c)
{
    if (!c)
        return -EINVAL;
    int64_t cycle = -ENOTSUP;
    int r = guarded([&] {
        CameraState &s = *c->state;
        std::lock_guard<std::mutex> lock(s.stateMutex);
        if (s.closed)
            return -ENODEV;
        const ControlInfoMap &map = s.camera->controls();
        if (!findControl(map, "AfMode") || !findControl(map, "AfTrigger"))
            return -ENOTSUP;
        s.persistent->set(controls::AfMode.id(), ControlValue(int32_t(controls::AfModeAuto)));
        s.pending->set(controls::AfMode.id(), ControlValue(int32_t(controls::AfModeAuto)));
        s.pending->set(controls::AfTrigger.id(), ControlValue(int32_t(controls::AfTriggerStart)));
        cycle = static_cast<int64_t>(s.afCycles + 1);
        return 0;
    });
    return r < 0 ? r : cycle;
}

} // extern "C"
