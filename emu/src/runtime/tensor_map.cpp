// cuTensorMapEncodeTiled: the driver API's rules (cuda.h's documentation of the function), each
// failure naming its rule, and the emulator's encoding of the opaque 128 bytes:
//   0  u32 magic             4  u8 data type, rank, interleave, swizzle
//   8  u8 L2 promotion, OOB fill, u16 0, u32 checksum (FNV-1a of the 128 bytes, itself as 0)
//  16  u64 global address   24  u32 dims - 1 [5]   48  u64 byte strides of dims 1..4
//  80  u8 box - 1 [5]       85  u8 element strides [5]   the rest 0
#include "runtime/tensor_map.h"

#include <cstdio>
#include <cstring>

namespace emu::tmap {

namespace {

constexpr uint32_t kMagic = 0x544d3147u;  // "G1MT"

uint32_t checksum(const uint8_t* b) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < 128; ++i) {
    const uint8_t v = (i >= 12 && i < 16) ? 0 : b[i];
    h = (h ^ v) * 16777619u;
  }
  return h;
}

// "[i]", to name an element of an argument array.
std::string at(uint32_t i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "[%u]", i);
  return buf;
}

int invalid(std::string* why, const std::string& rule) {
  if (why) *why = rule;
  return 1;  // CUDA_ERROR_INVALID_VALUE
}

}  // namespace

uint32_t element_bytes(uint32_t dtype) {
  static const uint32_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return dtype < 13 ? bytes[dtype] : 0;
}

bool is_float(uint32_t dtype) { return dtype >= 6 && dtype <= 12; }

uint32_t swizzle_bytes(uint32_t swizzle) {
  return swizzle == 1 ? 32 : swizzle == 2 ? 64 : swizzle == 3 ? 128 : 0;
}

int encode_tiled(void* map, uint32_t dtype, uint32_t rank, void* address, const uint64_t* dims,
                 const uint64_t* strides, const uint32_t* box, const uint32_t* estrides,
                 uint32_t interleave, uint32_t swizzle, uint32_t l2, uint32_t oob, std::string* why) {
  const uint64_t a = reinterpret_cast<uint64_t>(address);
  if (!map) return invalid(why, "tensorMap is NULL");
  if (reinterpret_cast<uint64_t>(map) % 64)
    return invalid(why, "the tensorMap address must be aligned to 64 bytes");
  if (dtype > 15) return invalid(why, "tensorDataType is not a CUtensorMapDataType");
  const uint32_t es = element_bytes(dtype);
  if (!es)
    return invalid(why, "tensorDataType " + std::to_string(dtype) +
                            " (a packed 4- or 6-bit type) is not supported by the emulator");
  if (rank == 0 || rank > 5) return invalid(why, "tensorRank must be non-zero and at most 5");
  if (interleave > 2) return invalid(why, "interleave is not a CUtensorMapInterleave");
  if (interleave != 0 && rank < 3)
    return invalid(why, "tensorRank must be at least 3 when interleave is not CU_TENSOR_MAP_INTERLEAVE_NONE");
  if (swizzle > 6) return invalid(why, "swizzle is not a CUtensorMapSwizzle");
  if (swizzle > 3)
    return invalid(why, "swizzle " + std::to_string(swizzle) +
                            " (the 128B atom modes) is not supported by the emulator");
  if (l2 > 3) return invalid(why, "l2Promotion is not a CUtensorMapL2promotion");
  if (oob > 1) return invalid(why, "oobFill is not a CUtensorMapFloatOOBfill");
  if (oob == 1 && !is_float(dtype))
    return invalid(why, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType");
  if (a % 16) return invalid(why, "globalAddress must be 16-byte aligned");
  if (interleave == 2 && a % 32)
    return invalid(why, "globalAddress must be 32-byte aligned when interleave is CU_TENSOR_MAP_INTERLEAVE_32B");
  if (!dims || !box || !estrides || (rank > 1 && !strides))
    return invalid(why, "globalDim, globalStrides, boxDim or elementStrides is NULL");
  for (uint32_t i = 0; i < rank; ++i) {
    const std::string d = at(i);
    if (dims[i] == 0 || dims[i] > (1ull << 32))
      return invalid(why, "globalDim" + d + " must be non-zero and at most 2^32");
    if (box[i] == 0 || box[i] > 256) return invalid(why, "boxDim" + d + " must be non-zero and at most 256");
    if (estrides[i] == 0 || estrides[i] > 8)
      return invalid(why, "elementStrides" + d + " must be non-zero and at most 8");
  }
  for (uint32_t i = 0; i + 1 < rank; ++i) {
    const std::string d = at(i);
    if (strides[i] % 16) return invalid(why, "globalStrides" + d + " must be a multiple of 16");
    if (strides[i] >= (1ull << 40)) return invalid(why, "globalStrides" + d + " must be less than 2^40");
    if (interleave == 2 && strides[i] % 32)
      return invalid(why, "globalStrides" + d + " must be a multiple of 32 when interleave is CU_TENSOR_MAP_INTERLEAVE_32B");
  }
  if (interleave == 0 && (uint64_t(box[0]) * es) % 16)
    return invalid(why, "boxDim[0] * the element size (" + std::to_string(uint64_t(box[0]) * es) +
                            " bytes) must be a multiple of 16 bytes");
  if (interleave == 0 && swizzle != 0 && uint64_t(box[0]) * es > swizzle_bytes(swizzle))
    return invalid(why, "the box's inner dimension (boxDim[0] * element size = " +
                            std::to_string(uint64_t(box[0]) * es) + " bytes) must not exceed the swizzle span of " +
                            std::to_string(swizzle_bytes(swizzle)) + " bytes");
  if (interleave == 2 && swizzle != 1)
    return invalid(why, "CU_TENSOR_MAP_INTERLEAVE_32B requires CU_TENSOR_MAP_SWIZZLE_32B");

  uint8_t b[128] = {};
  std::memcpy(b, &kMagic, 4);
  b[4] = uint8_t(dtype); b[5] = uint8_t(rank); b[6] = uint8_t(interleave); b[7] = uint8_t(swizzle);
  b[8] = uint8_t(l2); b[9] = uint8_t(oob);
  std::memcpy(b + 16, &a, 8);
  for (uint32_t i = 0; i < rank; ++i) {
    const uint32_t dm1 = uint32_t(dims[i] - 1);
    std::memcpy(b + 24 + 4 * i, &dm1, 4);
    b[80 + i] = uint8_t(box[i] - 1);
    b[85 + i] = uint8_t(estrides[i]);
  }
  for (uint32_t i = 0; i + 1 < rank; ++i) std::memcpy(b + 48 + 8 * i, &strides[i], 8);
  const uint32_t h = checksum(b);
  std::memcpy(b + 12, &h, 4);
  std::memcpy(map, b, 128);
  return 0;
}

bool decode(const void* bytes, Desc* out) {
  const uint8_t* b = static_cast<const uint8_t*>(bytes);
  uint32_t magic, h;
  std::memcpy(&magic, b, 4);
  std::memcpy(&h, b + 12, 4);
  if (magic != kMagic || h != checksum(b)) return false;
  Desc d;
  d.dtype = b[4]; d.rank = b[5]; d.interleave = b[6]; d.swizzle = b[7]; d.l2 = b[8]; d.oob_nan = b[9];
  std::memcpy(&d.address, b + 16, 8);
  d.stride[0] = element_bytes(d.dtype);
  for (uint32_t i = 0; i < d.rank; ++i) {
    uint32_t dm1;
    std::memcpy(&dm1, b + 24 + 4 * i, 4);
    d.dim[i] = uint64_t(dm1) + 1;
    d.box[i] = uint32_t(b[80 + i]) + 1;
    d.estride[i] = b[85 + i];
  }
  for (uint32_t i = 1; i < d.rank; ++i) std::memcpy(&d.stride[i], b + 48 + 8 * (i - 1), 8);
  *out = d;
  return true;
}

int replace_address(void* map, void* address, std::string* why) {
  Desc d;
  if (!map || !decode(map, &d)) return invalid(why, "tensorMap was not made by cuTensorMapEncodeTiled");
  const uint64_t a = reinterpret_cast<uint64_t>(address);
  if (a % 16) return invalid(why, "globalAddress must be 16-byte aligned");
  if (d.interleave == 2 && a % 32)
    return invalid(why, "globalAddress must be 32-byte aligned when interleave is CU_TENSOR_MAP_INTERLEAVE_32B");
  uint8_t* b = static_cast<uint8_t*>(map);
  std::memcpy(b + 16, &a, 8);
  const uint32_t h = checksum(b);
  std::memcpy(b + 12, &h, 4);
  return 0;
}

}  // namespace emu::tmap
