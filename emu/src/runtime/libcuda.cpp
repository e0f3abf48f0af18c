// A thin libcuda.so.1 stand-in for programs that link -lcuda (or dlopen libcuda.so.1) to encode
// tensor maps: cuTensorMapEncodeTiled and the few functions around it, the same code the runtime
// stand-in hands out through cudaGetDriverEntryPoint (driver_api.cpp). Nothing else of the driver
// API is here: a program that needs more fails to link or to find the symbol, as it should.
#include <cuda.h>

#include <string>

namespace emu::driver {
CUresult CUDAAPI encode_tiled(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
CUresult CUDAAPI replace_address(CUtensorMap*, void*);
CUresult CUDAAPI get_error_string(CUresult, const char**);
CUresult CUDAAPI get_error_name(CUresult, const char**);
}  // namespace emu::driver

extern "C" {
CUresult CUDAAPI cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
CUresult CUDAAPI cuDriverGetVersion(int* v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = CUDA_VERSION;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult e, const char** s) { return emu::driver::get_error_string(e, s); }
CUresult CUDAAPI cuGetErrorName(CUresult e, const char** s) { return emu::driver::get_error_name(e, s); }
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank,
                                        void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                        const cuuint32_t* box, const cuuint32_t* estrides,
                                        CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                        CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  return emu::driver::encode_tiled(map, dtype, rank, address, dims, strides, box, estrides, interleave,
                                   swizzle, l2, oob);
}
CUresult CUDAAPI cuTensorMapReplaceAddress(CUtensorMap* map, void* address) {
  return emu::driver::replace_address(map, address);
}
}
