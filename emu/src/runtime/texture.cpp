// CUDA arrays, the copies into and out of them, and texture and surface objects.
//
// An array's elements live in host memory entered in the table of allocations, like a
// cudaMalloc allocation's, so every texel a kernel reads through a texture or a surface is
// checked (bounds, use after cudaFreeArray, initialization, races) as a global access is. Arrays
// are packed: rows of width elements, then slices (or layers). Copies run when they are issued.
// cudaMemcpyToArray and cudaMemcpyFromArray are deprecated, and still exported for programs that call them.
#define CUDA_ENABLE_DEPRECATED
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "exec/machine.h"
#include "exec/metrics.h"
#include "exec/sanitizer.h"
#include "exec/texture.h"
#include "runtime/streams.h"

namespace emu::runtime {
std::recursive_mutex& api_lock();
cudaError_t sticky_error();
cudaError_t set_last_error(cudaError_t e);
}  // namespace emu::runtime

using namespace emu;

namespace {

struct ArrayImpl {
  tex::Image img;
  cudaChannelFormatDesc desc{};
  cudaExtent extent{};  // as the program gave it (height and depth 0 where it has none)
  unsigned flags = 0;
  uint64_t bytes = 0;
};

struct Textures {
  std::set<ArrayImpl*> arrays;
  std::map<uint64_t, cudaResourceDesc> resources;  // of each live texture or surface object
  std::map<uint64_t, cudaTextureDesc> samplers;
};
Textures& textures() {
  static Textures t;
  return t;
}

void say(const std::string& s) { std::fprintf(stderr, "gpu100 emulator: %s\n", s.c_str()); }
cudaError_t fail(cudaError_t e) { return runtime::set_last_error(e); }
cudaError_t unsupported(const char* fn, const std::string& what) {
  say(std::string(fn) + ": " + what + " is not supported by the emulator");
  return fail(cudaErrorNotSupported);
}

// Array copies and texture objects act at once: queued stream work runs first.
#define TEX_API_ENTER()                                                            \
  std::lock_guard<std::recursive_mutex> tex_lock_(runtime::api_lock());            \
  streams::sync_all();                                                             \
  if (cudaError_t sticky_ = runtime::sticky_error(); sticky_ != cudaSuccess) return sticky_

ArrayImpl* array_of(const void* a) {
  auto* impl = const_cast<ArrayImpl*>(static_cast<const ArrayImpl*>(a));
  return textures().arrays.count(impl) ? impl : nullptr;
}

// Channels of one size and kind: what the emulator fetches.
bool format_of(const cudaChannelFormatDesc& d, tex::Format* f) {
  const int bits[4] = {d.x, d.y, d.z, d.w};
  int channels = 0;
  for (int b : bits) {
    if (b == 0) break;
    if (b != bits[0]) return false;
    ++channels;
  }
  for (int c = channels; c < 4; ++c)
    if (bits[c] != 0) return false;
  if (channels == 0 || (bits[0] != 8 && bits[0] != 16 && bits[0] != 32)) return false;
  switch (d.f) {
    case cudaChannelFormatKindSigned: f->kind = tex::Kind::sint; break;
    case cudaChannelFormatKindUnsigned: f->kind = tex::Kind::uint; break;
    case cudaChannelFormatKindFloat:
      if (bits[0] == 8) return false;
      f->kind = tex::Kind::flt;
      break;
    default: return false;
  }
  f->channels = uint8_t(channels);
  f->bits = uint8_t(bits[0]);
  return true;
}

bool in_table(const void* p, size_t bytes) {
  return bytes == 0 || memory().find(reinterpret_cast<uint64_t>(p), bytes) != nullptr;
}

// Whether the pointer side of a copy is device memory, by the copy's kind.
bool device_side(cudaMemcpyKind kind, bool is_src, const void* p) {
  switch (kind) {
    case cudaMemcpyHostToHost: return false;
    case cudaMemcpyHostToDevice: return !is_src;
    case cudaMemcpyDeviceToHost: return is_src;
    case cudaMemcpyDeviceToDevice: return true;
    default: return memory().find(reinterpret_cast<uint64_t>(p), 1) != nullptr;
  }
}

// Copies a box of rows between an array and memory at `ptr` (rows `ptr_pitch` apart, slices
// `ptr_pitch * ptr_rows` apart). x_bytes and width_bytes are bytes of the array's rows; z counts
// slices of a 3D array or layers of a layered one.
cudaError_t array_copy(const char* fn, ArrayImpl* a, bool to_array, size_t x_bytes, size_t y, size_t z,
                       void* ptr, size_t ptr_pitch, size_t ptr_rows, size_t width_bytes, size_t height,
                       size_t depth, cudaMemcpyKind kind) {
  if (!a) {
    say(std::string(fn) + ": the array is not one cudaMallocArray or cudaMalloc3DArray returned");
    return fail(cudaErrorInvalidResourceHandle);
  }
  const tex::Image& img = a->img;
  const size_t slices = std::max<size_t>(img.depth, 1) * std::max<size_t>(img.layers, 1);
  if (width_bytes == 0 || height == 0 || depth == 0) return cudaSuccess;
  if (x_bytes + width_bytes > img.pitch || y + height > img.height || z + depth > slices) {
    say(std::string(fn) + ": the copy reaches outside the array");
    return fail(cudaErrorInvalidValue);
  }
  if (ptr_pitch < width_bytes) return fail(cudaErrorInvalidPitchValue);
  if (!ptr) return fail(cudaErrorInvalidValue);
  const bool ptr_device = device_side(kind, to_array, ptr);
  const size_t span = ptr_pitch * ptr_rows * (depth - 1) + ptr_pitch * (height - 1) + width_bytes;
  if (ptr_device && !in_table(ptr, span)) {
    say(std::string(fn) + ": the device range is not inside one allocation (" +
        memory().describe(reinterpret_cast<uint64_t>(ptr)) + ")");
    return fail(cudaErrorInvalidValue);
  }
  for (size_t s = 0; s < depth; ++s)
    for (size_t r = 0; r < height; ++r) {
      char* in_array = reinterpret_cast<char*>(img.base) + (z + s) * img.slice + (y + r) * img.pitch + x_bytes;
      char* in_ptr = static_cast<char*>(ptr) + s * ptr_pitch * ptr_rows + r * ptr_pitch;
      if (to_array) {
        std::memmove(in_array, in_ptr, width_bytes);
        if (ptr_device) san::on_copy(in_array, in_ptr, width_bytes);
        else san::on_host_write(in_array, width_bytes);
      } else {
        std::memmove(in_ptr, in_array, width_bytes);
        if (ptr_device) san::on_copy(in_ptr, in_array, width_bytes);
      }
    }
  return cudaSuccess;
}

// A row-major run of `count` bytes starting at (x_bytes, y): the old cudaMemcpyToArray form.
// The array is packed, so the run is one range of its bytes.
cudaError_t array_copy_linear(const char* fn, ArrayImpl* a, bool to_array, size_t x_bytes, size_t y,
                              void* ptr, size_t count, cudaMemcpyKind kind) {
  if (!a) return array_copy(fn, a, to_array, 0, 0, 0, ptr, 0, 0, 0, 0, 0, kind);
  const tex::Image& img = a->img;
  const size_t start = y * img.pitch + x_bytes;
  if (x_bytes >= img.pitch || start + count > a->bytes) {
    say(std::string(fn) + ": the copy reaches outside the array");
    return fail(cudaErrorInvalidValue);
  }
  if (count == 0) return cudaSuccess;
  if (!ptr) return fail(cudaErrorInvalidValue);
  const bool ptr_device = device_side(kind, to_array, ptr);
  if (ptr_device && !in_table(ptr, count)) {
    say(std::string(fn) + ": the device range is not inside one allocation (" +
        memory().describe(reinterpret_cast<uint64_t>(ptr)) + ")");
    return fail(cudaErrorInvalidValue);
  }
  char* in_array = reinterpret_cast<char*>(img.base) + start;
  char* dst = to_array ? in_array : static_cast<char*>(ptr);
  const char* src = to_array ? static_cast<const char*>(ptr) : in_array;
  std::memmove(dst, src, count);
  if (ptr_device) san::on_copy(dst, src, count);
  else if (to_array) san::on_host_write(dst, count);
  return cudaSuccess;
}

tex::Address address_of(cudaTextureAddressMode m) {
  switch (m) {
    case cudaAddressModeWrap: return tex::Address::wrap;
    case cudaAddressModeMirror: return tex::Address::mirror;
    case cudaAddressModeBorder: return tex::Address::border;
    default: return tex::Address::clamp;
  }
}

// The image a resource describes, or an error (said).
cudaError_t image_of(const char* fn, const cudaResourceDesc& r, tex::Image* img) {
  switch (r.resType) {
    case cudaResourceTypeArray: {
      ArrayImpl* a = array_of(r.res.array.array);
      if (!a) {
        say(std::string(fn) + ": the resource's array is not a live CUDA array");
        return fail(cudaErrorInvalidResourceHandle);
      }
      *img = a->img;
      return cudaSuccess;
    }
    case cudaResourceTypeLinear: {
      tex::Format f;
      if (!format_of(r.res.linear.desc, &f)) return unsupported(fn, "this channel format");
      if (!r.res.linear.devPtr || !in_table(r.res.linear.devPtr, r.res.linear.sizeInBytes)) {
        say(std::string(fn) + ": the linear resource is not inside one allocation (" +
            memory().describe(reinterpret_cast<uint64_t>(r.res.linear.devPtr)) + ")");
        return fail(cudaErrorInvalidValue);
      }
      img->base = reinterpret_cast<uint64_t>(r.res.linear.devPtr);
      img->fmt = f;
      img->width = uint32_t(r.res.linear.sizeInBytes / f.texel_bytes());
      img->pitch = img->slice = r.res.linear.sizeInBytes;
      img->dims = 1;
      return cudaSuccess;
    }
    case cudaResourceTypePitch2D: {
      tex::Format f;
      const auto& p = r.res.pitch2D;
      if (!format_of(p.desc, &f)) return unsupported(fn, "this channel format");
      if (p.width == 0 || p.height == 0 || p.pitchInBytes < p.width * f.texel_bytes())
        return fail(cudaErrorInvalidValue);
      if (!p.devPtr || !in_table(p.devPtr, p.pitchInBytes * (p.height - 1) + p.width * f.texel_bytes())) {
        say(std::string(fn) + ": the pitched resource is not inside one allocation (" +
            memory().describe(reinterpret_cast<uint64_t>(p.devPtr)) + ")");
        return fail(cudaErrorInvalidValue);
      }
      img->base = reinterpret_cast<uint64_t>(p.devPtr);
      img->fmt = f;
      img->width = uint32_t(p.width);
      img->height = uint32_t(p.height);
      img->pitch = p.pitchInBytes;
      img->slice = p.pitchInBytes * p.height;
      img->dims = 2;
      return cudaSuccess;
    }
    default: return unsupported(fn, "a mipmapped array resource");
  }
}

}  // namespace

extern "C" {

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned int flags) {
  TEX_API_ENTER();
  if (!array || !desc) return fail(cudaErrorInvalidValue);
  *array = nullptr;
  tex::Format f;
  if (!format_of(*desc, &f)) {
    say("cudaMalloc3DArray: channel format (" + std::to_string(desc->x) + ", " + std::to_string(desc->y) + ", " +
        std::to_string(desc->z) + ", " + std::to_string(desc->w) + ") of kind " + std::to_string(int(desc->f)) +
        " is not emulated (channels of one size, 8, 16 or 32 bits, signed, unsigned or float)");
    return fail(cudaErrorInvalidChannelDescriptor);
  }
  if (flags & (cudaArrayCubemap | cudaArraySparse | cudaArrayDeferredMapping))
    return unsupported("cudaMalloc3DArray", "a cubemap, sparse or deferred-mapping array");
  const bool is_layered = flags & cudaArrayLayered;
  if (extent.width == 0 || (extent.depth && !extent.height && !is_layered) || (is_layered && extent.depth == 0))
    return fail(cudaErrorInvalidValue);
  auto impl = std::make_unique<ArrayImpl>();
  tex::Image& img = impl->img;
  img.fmt = f;
  img.array = true;
  img.surface_ok = flags & cudaArraySurfaceLoadStore;
  img.width = uint32_t(extent.width);
  img.height = uint32_t(std::max<size_t>(extent.height, 1));
  img.dims = extent.height ? 2 : 1;
  if (is_layered) img.layers = uint32_t(extent.depth);
  else if (extent.depth) { img.depth = uint32_t(extent.depth); img.dims = 3; }
  img.pitch = uint64_t(img.width) * f.texel_bytes();
  img.slice = img.pitch * img.height;
  impl->bytes = img.slice * img.depth * std::max<uint32_t>(img.layers, 1);
  if (memory().live_bytes() + impl->bytes > device_config().total_mem) return fail(cudaErrorMemoryAllocation);
  void* q = std::aligned_alloc(256, (impl->bytes + 255) / 256 * 256);
  if (!q) return fail(cudaErrorMemoryAllocation);
  std::memset(q, 0xFF, impl->bytes);  // reads as all ones until written, as cudaMalloc's memory
  img.base = reinterpret_cast<uint64_t>(q);
  memory().add(img.base, impl->bytes, "a CUDA array");
  san::on_device_alloc(img.base, impl->bytes);
  metrics::device_alloc(impl->bytes);
  impl->desc = *desc;
  impl->extent = extent;
  impl->flags = flags;
  *array = reinterpret_cast<cudaArray_t>(impl.get());
  textures().arrays.insert(impl.release());
  return cudaSuccess;
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height,
                            unsigned int flags) {
  if (flags & cudaArrayLayered) return fail(cudaErrorInvalidValue);
  return cudaMalloc3DArray(array, desc, cudaExtent{width, height, 0}, flags);
}

cudaError_t cudaFreeArray(cudaArray_t array) {
  TEX_API_ENTER();
  if (!array) return cudaSuccess;
  ArrayImpl* a = array_of(array);
  if (!a) {
    say("cudaFreeArray: the array is not a live CUDA array (freed twice?)");
    return fail(cudaErrorInvalidValue);
  }
  memory().remove(a->img.base);
  metrics::device_free(a->bytes);
  std::free(reinterpret_cast<void*>(a->img.base));
  textures().arrays.erase(a);
  delete a;
  return cudaSuccess;
}

cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array) {
  TEX_API_ENTER();
  ArrayImpl* a = array_of(array);
  if (!a) return fail(cudaErrorInvalidResourceHandle);
  if (desc) *desc = a->desc;
  if (extent) *extent = a->extent;
  if (flags) *flags = a->flags;
  return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
  TEX_API_ENTER();
  ArrayImpl* a = array_of(array);
  if (!a || !desc) return fail(a ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
  *desc = a->desc;
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind) {
  TEX_API_ENTER();
  return array_copy("cudaMemcpy2DToArray", array_of(dst), true, wOffset, hOffset, 0, const_cast<void*>(src),
                    spitch, height, width, height, 1, kind);
}
cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                     size_t spitch, size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, cudaMemcpyKind kind) {
  TEX_API_ENTER();
  return array_copy("cudaMemcpy2DFromArray", array_of(src), false, wOffset, hOffset, 0, dst, dpitch, height,
                    width, height, 1, kind);
}
cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width, size_t height, cudaMemcpyKind kind,
                                       cudaStream_t) {
  return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                              cudaMemcpyKind kind) {
  TEX_API_ENTER();
  return array_copy_linear("cudaMemcpyToArray", array_of(dst), true, wOffset, hOffset, const_cast<void*>(src),
                           count, kind);
}
cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                                   cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpyToArray(dst, wOffset, hOffset, src, count, kind);
}
cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                cudaMemcpyKind kind) {
  TEX_API_ENTER();
  return array_copy_linear("cudaMemcpyFromArray", array_of(src), false, wOffset, hOffset, dst, count, kind);
}
cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                     size_t count, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpyFromArray(dst, src, wOffset, hOffset, count, kind);
}

// 3D copies: between an array and pitched memory (positions and extent in elements of the
// array, the pitched side's x in bytes), or between pitched pointers (all in bytes).
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  TEX_API_ENTER();
  if (!p) return fail(cudaErrorInvalidValue);
  const cudaExtent e = p->extent;
  if (p->srcArray && p->dstArray) return unsupported("cudaMemcpy3D", "a copy from one CUDA array to another");
  if (p->srcArray || p->dstArray) {
    const bool to_array = p->dstArray != nullptr;
    ArrayImpl* a = array_of(to_array ? static_cast<const void*>(p->dstArray) : static_cast<const void*>(p->srcArray));
    const cudaPitchedPtr& ptr = to_array ? p->srcPtr : p->dstPtr;
    const cudaPos& apos = to_array ? p->dstPos : p->srcPos;
    const cudaPos& ppos = to_array ? p->srcPos : p->dstPos;
    if (!a) return array_copy("cudaMemcpy3D", nullptr, to_array, 0, 0, 0, nullptr, 0, 0, 0, 0, 0, p->kind);
    const size_t tb = a->img.fmt.texel_bytes();
    const size_t rows = ptr.ysize ? ptr.ysize : std::max<size_t>(e.height, 1);
    char* base = static_cast<char*>(ptr.ptr);
    if (base) base += (ppos.z * rows + ppos.y) * ptr.pitch + ppos.x;
    return array_copy("cudaMemcpy3D", a, to_array, apos.x * tb, apos.y, apos.z, base, ptr.pitch, rows,
                      e.width * tb, std::max<size_t>(e.height, 1), std::max<size_t>(e.depth, 1), p->kind);
  }
  if (!p->srcPtr.ptr || !p->dstPtr.ptr) return fail(cudaErrorInvalidValue);
  if (e.width == 0 || e.height == 0 || e.depth == 0) return cudaSuccess;
  auto at = [](const cudaPitchedPtr& q, const cudaPos& pos, size_t y, size_t z) {
    return static_cast<char*>(q.ptr) + (pos.z + z) * q.pitch * q.ysize + (pos.y + y) * q.pitch + pos.x;
  };
  for (int side = 0; side < 2; ++side) {
    const cudaPitchedPtr& q = side ? p->srcPtr : p->dstPtr;
    const cudaPos& pos = side ? p->srcPos : p->dstPos;
    if (pos.x + e.width > q.pitch) return fail(cudaErrorInvalidValue);
    const char* first = at(q, pos, 0, 0);
    const char* last = at(q, pos, e.height - 1, e.depth - 1) + e.width;
    if (device_side(p->kind, side == 1, q.ptr) && !in_table(first, size_t(last - first))) {
      say("cudaMemcpy3D: a device range is not inside one allocation");
      return fail(cudaErrorInvalidValue);
    }
  }
  for (size_t z = 0; z < e.depth; ++z)
    for (size_t y = 0; y < e.height; ++y) {
      char* to = at(p->dstPtr, p->dstPos, y, z);
      const char* from = at(p->srcPtr, p->srcPos, y, z);
      std::memmove(to, from, e.width);
      if (in_table(from, e.width) && in_table(to, e.width)) san::on_copy(to, from, e.width);
      else if (in_table(to, e.width)) san::on_host_write(to, e.width);
    }
  return cudaSuccess;
}
cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t) { return cudaMemcpy3D(p); }

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* out, const cudaResourceDesc* res,
                                    const cudaTextureDesc* desc, const cudaResourceViewDesc* view) {
  TEX_API_ENTER();
  const char* fn = "cudaCreateTextureObject";
  if (!out || !res || !desc) return fail(cudaErrorInvalidValue);
  if (view) return unsupported(fn, "a resource view");
  if (desc->sRGB) return unsupported(fn, "sRGB conversion");
  tex::Object o;
  if (cudaError_t e = image_of(fn, *res, &o.img); e != cudaSuccess) return e;
  for (int a = 0; a < 3; ++a) o.address[a] = address_of(desc->addressMode[a]);
  o.normalized_coords = desc->normalizedCoords != 0;
  o.read_normalized = desc->readMode == cudaReadModeNormalizedFloat && o.img.fmt.kind != tex::Kind::flt &&
                      o.img.fmt.bits < 32;
  // The guide: linear filtering only for textures that return floating-point values.
  o.linear_filter = desc->filterMode == cudaFilterModeLinear &&
                    (o.img.fmt.kind == tex::Kind::flt || o.read_normalized);
  std::memcpy(o.border, desc->borderColor, sizeof o.border);
  const uint64_t h = tex::create(o);
  textures().resources[h] = *res;
  textures().samplers[h] = *desc;
  *out = h;
  return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t t) {
  TEX_API_ENTER();
  if (t == 0) return cudaSuccess;
  if (!tex::destroy(t, false)) {
    say("cudaDestroyTextureObject: " + tex::why_not_live(t, false));
    return fail(cudaErrorInvalidValue);
  }
  textures().resources.erase(t);
  textures().samplers.erase(t);
  return cudaSuccess;
}

cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* res, cudaTextureObject_t t) {
  TEX_API_ENTER();
  if (!res || !tex::find(t, false)) return fail(cudaErrorInvalidValue);
  *res = textures().resources[t];
  return cudaSuccess;
}

cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* desc, cudaTextureObject_t t) {
  TEX_API_ENTER();
  if (!desc || !tex::find(t, false)) return fail(cudaErrorInvalidValue);
  *desc = textures().samplers[t];
  return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* out, const cudaResourceDesc* res) {
  TEX_API_ENTER();
  const char* fn = "cudaCreateSurfaceObject";
  if (!out || !res) return fail(cudaErrorInvalidValue);
  if (res->resType != cudaResourceTypeArray) {
    say(std::string(fn) + ": a surface's resource is a CUDA array");
    return fail(cudaErrorInvalidValue);
  }
  tex::Object o;
  o.surface = true;
  if (cudaError_t e = image_of(fn, *res, &o.img); e != cudaSuccess) return e;
  if (!o.img.surface_ok) {
    say(std::string(fn) + ": the array was not created with cudaArraySurfaceLoadStore");
    return fail(cudaErrorInvalidValue);
  }
  const uint64_t h = tex::create(o);
  textures().resources[h] = *res;
  *out = h;
  return cudaSuccess;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t s) {
  TEX_API_ENTER();
  if (s == 0) return cudaSuccess;
  if (!tex::destroy(s, true)) {
    say("cudaDestroySurfaceObject: " + tex::why_not_live(s, true));
    return fail(cudaErrorInvalidValue);
  }
  textures().resources.erase(s);
  return cudaSuccess;
}

cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* res, cudaSurfaceObject_t s) {
  TEX_API_ENTER();
  if (!res || !tex::find(s, true)) return fail(cudaErrorInvalidValue);
  *res = textures().resources[s];
  return cudaSuccess;
}

}  // extern "C"
