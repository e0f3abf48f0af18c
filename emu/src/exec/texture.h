// Texture and surface objects as the runtime creates them (runtime/texture.cpp) and the tex,
// suld, sust, txq and suq instructions read them (exec/texture.cpp). A handle is a 64-bit number
// in a register (bindless objects); the registry below maps the live ones to what they describe.
#pragma once
#include <cstdint>
#include <string>

namespace emu::tex {

enum class Kind : uint8_t { sint, uint, flt };

// The element format of an array or a linear resource: up to four channels of one kind.
struct Format {
  Kind kind = Kind::flt;
  uint8_t channels = 1;
  uint8_t bits = 32;  // of each channel (the emulator takes formats whose channels are alike)
  uint32_t texel_bytes() const { return uint32_t(channels) * bits / 8; }
};

// The memory a texture or surface reads: a CUDA array (tightly packed rows, then slices, then
// layers) or linear memory (1D, or 2D with a pitch).
struct Image {
  uint64_t base = 0;
  uint64_t pitch = 0;        // bytes from one row to the next
  uint64_t slice = 0;        // bytes from one slice (or layer) to the next
  uint32_t width = 0, height = 1, depth = 1, layers = 0;  // layers: 0 for an unlayered image
  uint32_t dims = 1;         // 1, 2 or 3
  Format fmt;
  bool array = false;        // a CUDA array (else linear memory)
  bool surface_ok = false;   // created with cudaArraySurfaceLoadStore
};

enum class Address : uint8_t { wrap, clamp, mirror, border };

struct Object {
  Image img;
  bool surface = false;
  Address address[3] = {Address::clamp, Address::clamp, Address::clamp};
  bool linear_filter = false;
  bool normalized_coords = false;
  bool read_normalized = false;  // cudaReadModeNormalizedFloat on an integer format
  float border[4] = {0, 0, 0, 0};
};

// Returns the new object's handle (never 0, never reused).
uint64_t create(const Object& o);
// False when the handle names no live object of that kind.
bool destroy(uint64_t handle, bool surface);
// The live object, or nullptr.
const Object* find(uint64_t handle, bool surface);
// Why a handle that find() refused is not usable, for messages.
std::string why_not_live(uint64_t handle, bool surface);

}  // namespace emu::tex

namespace emu {
struct DecodeCtx;
struct PInstr;
struct Inst;
// tex, txq, suld, sust, suq (exec/texture.cpp).
bool decode_texture(DecodeCtx& d, const PInstr& p, Inst& in);
}  // namespace emu
