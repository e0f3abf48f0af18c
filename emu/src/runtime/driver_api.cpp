// The driver API functions a runtime program reaches without linking libcuda: cudaGetDriverEntryPoint
// and cudaGetDriverEntryPointByVersion hand out the emulator's cuTensorMapEncodeTiled (and the few
// driver functions around it). libcuda.cpp exports the same functions as a libcuda.so.1 stand-in.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/tensor_map.h"

namespace emu::driver {

CUresult report(const char* fn, int rc, const std::string& why) {
  if (rc) std::fprintf(stderr, "gpu100 emulator: %s: CUDA_ERROR_INVALID_VALUE: %s\n", fn, why.c_str());
  return rc ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI encode_tiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* address,
                              const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                              const cuuint32_t* estrides, CUtensorMapInterleave interleave,
                              CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                              CUtensorMapFloatOOBfill oob) {
  std::string why;
  const int rc = tmap::encode_tiled(map, uint32_t(dtype), rank, address, dims, strides, box, estrides,
                                    uint32_t(interleave), uint32_t(swizzle), uint32_t(l2), uint32_t(oob), &why);
  return report("cuTensorMapEncodeTiled", rc, why);
}

CUresult CUDAAPI replace_address(CUtensorMap* map, void* address) {
  std::string why;
  return report("cuTensorMapReplaceAddress", tmap::replace_address(map, address, &why), why);
}

CUresult CUDAAPI get_error_string(CUresult e, const char** s) {
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  switch (e) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported"; break;
    default: *s = "unknown error"; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI get_error_name(CUresult e, const char** s) {
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  switch (e) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// The driver functions handed out by name, with the CUDA version that introduced each.
struct Entry {
  const char* name;
  void* fn;
  unsigned version;
};
const Entry* find(const char* name) {
  static const Entry table[] = {
      {"cuTensorMapEncodeTiled", reinterpret_cast<void*>(&encode_tiled), 12000},
      {"cuTensorMapReplaceAddress", reinterpret_cast<void*>(&replace_address), 12000},
      {"cuGetErrorString", reinterpret_cast<void*>(&get_error_string), 6000},
      {"cuGetErrorName", reinterpret_cast<void*>(&get_error_name), 6000},
  };
  for (const Entry& e : table)
    if (name && std::strcmp(e.name, name) == 0) return &e;
  return nullptr;
}

}  // namespace emu::driver

namespace {

cudaError_t entry_point(const char* symbol, void** fn, unsigned version, cudaDriverEntryPointQueryResult* status) {
  if (!symbol || !fn) return cudaErrorInvalidValue;
  if (version > CUDART_VERSION) return cudaErrorInvalidValue;  // newer than the driver
  *fn = nullptr;
  const emu::driver::Entry* e = emu::driver::find(symbol);
  cudaDriverEntryPointQueryResult r = cudaDriverEntryPointSymbolNotFound;
  if (e && version < e->version) r = cudaDriverEntryPointVersionNotSufficent;
  else if (e) {
    *fn = e->fn;
    r = cudaDriverEntryPointSuccess;
  } else {
    std::fprintf(stderr, "gpu100 emulator: cudaGetDriverEntryPoint: the driver function %s is not emulated\n", symbol);
  }
  if (status) *status = r;
  return cudaSuccess;
}

}  // namespace

extern "C" {
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int version,
                                             unsigned long long, cudaDriverEntryPointQueryResult* status) {
  return entry_point(symbol, fn, version, status);
}
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** fn, unsigned int version,
                                                  unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
  return cudaGetDriverEntryPointByVersion(symbol, fn, version, flags, status);
}
// The unversioned form returns the newest version of the function.
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long,
                                    cudaDriverEntryPointQueryResult* status) {
  return entry_point(symbol, fn, CUDART_VERSION, status);
}
cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** fn, unsigned long long flags,
                                         cudaDriverEntryPointQueryResult* status) {
  (void)flags;
  return entry_point(symbol, fn, CUDART_VERSION, status);
}
}
