// The fatbinary nvcc embeds in a program, as registered through __cudaRegisterFatBinary:
//   wrapper {magic 0x466243b1, version, const void* fatbin, const void** prelinked}
//            (prelinked: version 2 only, the -rdc link's objects' fatbinaries, null-terminated)
//   fatbin  {magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries}
//   entries {u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size,
//            u32 compressed size, u32, u16 minor, u16 major, u32 arch, u32 name offset,
//            u32 name size, u64 flags, u64, u64 uncompressed size} then the payload.
// PTX payloads are zstd-compressed when flag 0x8000 is set (nvcc 13's default).
#include "ptx/fatbin.h"

#include <zstd.h>

#include <cstring>
#include <stdexcept>

namespace emu {

namespace {
template <class T>
T read_at(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
constexpr uint32_t kWrapperMagic = 0x466243b1;
constexpr uint32_t kFatbinMagic = 0xBA55ED50;

void read_fatbin(const uint8_t* p, int unit, std::vector<PtxEntry>& out);

}  // namespace

std::vector<PtxEntry> fatbin_ptx_entries(const void* wrapper_or_fatbin) {
  const uint8_t* p = static_cast<const uint8_t*>(wrapper_or_fatbin);
  std::vector<PtxEntry> out;
  if (read_at<uint32_t>(p) == kWrapperMagic) {
    const uint32_t version = read_at<uint32_t>(p + 4);
    read_fatbin(read_at<const uint8_t*>(p + 8), 0, out);
    if (version == 2)
      if (const uint8_t* const* list = read_at<const uint8_t* const*>(p + 16))
        for (int u = 0; list[u]; ++u) read_fatbin(list[u], u + 1, out);
    return out;
  }
  read_fatbin(p, 0, out);
  return out;
}

namespace {

void read_fatbin(const uint8_t* p, int unit, std::vector<PtxEntry>& out) {
  if (read_at<uint32_t>(p) != kFatbinMagic)
    throw std::runtime_error("registered fatbinary has an unknown format");
  const uint16_t header_size = read_at<uint16_t>(p + 6);
  const uint64_t total = read_at<uint64_t>(p + 8);
  const uint8_t* e = p + header_size;
  const uint8_t* end = e + total;
  while (e + 64 <= end) {
    const uint16_t kind = read_at<uint16_t>(e);
    const uint32_t eh = read_at<uint32_t>(e + 4);
    const uint64_t size = read_at<uint64_t>(e + 8);
    const uint32_t compressed = read_at<uint32_t>(e + 16);
    const uint32_t arch = read_at<uint32_t>(e + 28);
    const uint64_t flags = read_at<uint64_t>(e + 40);
    const uint64_t plain_size = read_at<uint64_t>(e + 56);
    const uint8_t* payload = e + eh;
    if (kind == 1) {
      PtxEntry entry;
      entry.arch = int(arch);
      entry.unit = unit;
      if (flags & 0x8000) {
        std::string text(plain_size, '\0');
        size_t got = ZSTD_decompress(text.data(), text.size(), payload, compressed ? compressed : size);
        if (ZSTD_isError(got))
          throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(got));
        text.resize(got);
        entry.text = std::move(text);
      } else {
        entry.text.assign(reinterpret_cast<const char*>(payload), size);
      }
      while (!entry.text.empty() && entry.text.back() == '\0') entry.text.pop_back();
      out.push_back(std::move(entry));
    }
    e += eh + size;
  }
}

}  // namespace

}  // namespace emu
