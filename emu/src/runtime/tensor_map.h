// Tensor maps (CUtensorMap): the driver's cuTensorMapEncodeTiled, validated as the CUDA driver API
// documents it, and the emulator's own encoding of the 128 opaque bytes, which the bulk tensor
// copies (exec/async_copy.cpp) decode. The same code is in the runtime stand-in (reached through
// cudaGetDriverEntryPoint) and in the libcuda.so.1 stand-in (src/runtime/libcuda.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace emu::tmap {

// What a map holds, decoded. Dimension 0 is the innermost.
struct Desc {
  uint32_t dtype = 0;        // CUtensorMapDataType
  uint32_t rank = 0;         // 1..5
  uint32_t interleave = 0;   // CUtensorMapInterleave
  uint32_t swizzle = 0;      // CUtensorMapSwizzle
  uint32_t l2 = 0;           // CUtensorMapL2promotion
  uint32_t oob_nan = 0;      // CUtensorMapFloatOOBfill: 1 = NaN
  uint64_t address = 0;
  uint64_t dim[5] = {};      // elements
  uint64_t stride[5] = {};   // bytes; stride[0] is the element size
  uint32_t box[5] = {};      // elements traversed
  uint32_t estride[5] = {};  // traversal steps
};

// Bytes of one element of a CUtensorMapDataType, 0 for the packed sub-byte types and unknown ones.
uint32_t element_bytes(uint32_t dtype);
bool is_float(uint32_t dtype);
// The swizzle span in bytes (0 for none), for CU_TENSOR_MAP_SWIZZLE_{NONE,32B,64B,128B}.
uint32_t swizzle_bytes(uint32_t swizzle);

// cuTensorMapEncodeTiled's checks and encoding: returns 0 (CUDA_SUCCESS) or 1
// (CUDA_ERROR_INVALID_VALUE) with `why` naming the rule broken.
int encode_tiled(void* map, uint32_t dtype, uint32_t rank, void* address, const uint64_t* dims,
                 const uint64_t* strides, const uint32_t* box, const uint32_t* estrides,
                 uint32_t interleave, uint32_t swizzle, uint32_t l2, uint32_t oob, std::string* why);
// cuTensorMapReplaceAddress.
int replace_address(void* map, void* address, std::string* why);

// Reads a map's 128 bytes; false when they are not a map that encode_tiled made.
bool decode(const void* bytes, Desc* out);

}  // namespace emu::tmap
