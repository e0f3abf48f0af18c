// The fatbinary nvcc embeds in a program, as registered through __cudaRegisterFatBinary:
//   wrapper {magic 0x466243b1, version, const void* fatbin, const void** prelinked}
//            (prelinked: version 2 only, the -rdc link's objects' fatbinaries, null-terminated)
//   fatbin  {magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries}
//   entries {u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size,
//            u32 compressed size, u32, u16 minor, u16 major, u32 arch, u32 name offset,
//            u32 name size, u64 flags, u64, u64 uncompressed size} then the payload.
// PTX payloads are zstd-compressed when flag 0x8000 is set (nvcc 13's default).
// ELF payloads (kind 2) are cubins: the SASS of one architecture, with ptxas's per-kernel
// attributes in .nv.info sections (see cubin_kernels below).
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
constexpr uint16_t kKindPtx = 1, kKindElf = 2;
constexpr uint64_t kFlagZstd = 0x8000;

// The fatbinaries of a registered pointer, by unit: the registered one (unit 0), then, for a
// version 2 wrapper, those of the objects a -rdc link joined (units 1, 2, ...).
std::vector<const uint8_t*> unit_fatbins(const void* wrapper_or_fatbin) {
  const uint8_t* p = static_cast<const uint8_t*>(wrapper_or_fatbin);
  if (read_at<uint32_t>(p) != kWrapperMagic) return {p};
  std::vector<const uint8_t*> fatbins{read_at<const uint8_t*>(p + 8)};
  if (read_at<uint32_t>(p + 4) == 2)
    if (const uint8_t* const* list = read_at<const uint8_t* const*>(p + 16))
      for (int u = 0; list[u]; ++u) fatbins.push_back(list[u]);
  return fatbins;
}

// One entry of a fatbinary, as its header describes it.
struct FatbinEntry {
  uint16_t kind = 0;        // kKindPtx or kKindElf
  uint32_t arch = 0;        // 90 for compute_90 / sm_90
  uint64_t flags = 0;       // kFlagZstd: the payload is zstd-compressed
  const uint8_t* payload = nullptr;
  uint64_t size = 0;        // the payload's bytes in the fatbinary
  uint32_t compressed = 0;  // the compressed bytes (0: size)
  uint64_t plain_size = 0;  // the bytes once decompressed
};

// Calls fn(entry) for each entry of one fatbinary, in order. false (and no call) when p is not
// a fatbinary.
template <class Fn>
bool each_entry(const uint8_t* p, Fn&& fn) {
  if (read_at<uint32_t>(p) != kFatbinMagic) return false;
  const uint16_t header_size = read_at<uint16_t>(p + 6);
  const uint64_t total = read_at<uint64_t>(p + 8);
  const uint8_t* e = p + header_size;
  const uint8_t* end = e + total;
  while (e + 64 <= end) {
    FatbinEntry entry;
    entry.kind = read_at<uint16_t>(e);
    const uint32_t eh = read_at<uint32_t>(e + 4);
    entry.size = read_at<uint64_t>(e + 8);
    entry.compressed = read_at<uint32_t>(e + 16);
    entry.arch = read_at<uint32_t>(e + 28);
    entry.flags = read_at<uint64_t>(e + 40);
    entry.plain_size = read_at<uint64_t>(e + 56);
    entry.payload = e + eh;
    fn(entry);
    e += eh + entry.size;
  }
  return true;
}

// Decompresses a kFlagZstd entry's payload into dst (plain_size bytes); ZSTD_decompress's result.
size_t decompress(const FatbinEntry& entry, void* dst) {
  return ZSTD_decompress(dst, entry.plain_size, entry.payload,
                         entry.compressed ? entry.compressed : entry.size);
}

}  // namespace

std::vector<PtxEntry> fatbin_ptx_entries(const void* wrapper_or_fatbin) {
  std::vector<PtxEntry> out;
  const std::vector<const uint8_t*> fatbins = unit_fatbins(wrapper_or_fatbin);
  for (size_t unit = 0; unit < fatbins.size(); ++unit) {
    const bool ok = each_entry(fatbins[unit], [&](const FatbinEntry& e) {
      if (e.kind != kKindPtx) return;
      PtxEntry entry;
      entry.arch = int(e.arch);
      entry.unit = int(unit);
      if (e.flags & kFlagZstd) {
        std::string text(e.plain_size, '\0');
        size_t got = decompress(e, text.data());
        if (ZSTD_isError(got))
          throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(got));
        text.resize(got);
        entry.text = std::move(text);
      } else {
        entry.text.assign(reinterpret_cast<const char*>(e.payload), e.size);
      }
      while (!entry.text.empty() && entry.text.back() == '\0') entry.text.pop_back();
      out.push_back(std::move(entry));
    });
    if (!ok) throw std::runtime_error("registered fatbinary has an unknown format");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Cubins. An ELF64 file; its .nv.info section (and, in some toolkits, the per-kernel
// .nv.info.<kernel> sections) is a list of attributes {u8 format, u8 attribute, then u16 size
// and that many bytes for format 4 (EIFMT_SVAL), or a u16 value}. EIATTR_REGCOUNT (0x2f) and
// EIATTR_FRAME_SIZE (0x11) hold {u32 symbol index, u32 value}; the section's sh_link is the symbol
// table, whose names are the kernels' mangled names. Older toolkits kept the register count in
// the top byte of sh_info of the kernel's .text.<kernel> section instead: read when no
// EIATTR_REGCOUNT names the kernel.
namespace {

constexpr uint8_t kEifmtSval = 4;
constexpr uint8_t kEiattrRegcount = 0x2f;
constexpr uint8_t kEiattrFrameSize = 0x11;

struct ElfSection {
  uint32_t name = 0, type = 0, link = 0, info = 0;
  uint64_t offset = 0, size = 0, entsize = 0;
};

}  // namespace

void cubin_kernels(const uint8_t* elf, size_t bytes, std::map<std::string, SassKernel>& out) {
  if (bytes < 64 || std::memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2) return;  // ELF64 only
  const uint64_t shoff = read_at<uint64_t>(elf + 0x28);
  const uint16_t shentsize = read_at<uint16_t>(elf + 0x3a), shnum = read_at<uint16_t>(elf + 0x3c),
                 shstrndx = read_at<uint16_t>(elf + 0x3e);
  if (shentsize < 64 || shoff > bytes || uint64_t(shnum) * shentsize > bytes - shoff || shstrndx >= shnum) return;
  std::vector<ElfSection> sec(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint8_t* h = elf + shoff + uint64_t(i) * shentsize;
    sec[i].name = read_at<uint32_t>(h);
    sec[i].type = read_at<uint32_t>(h + 4);
    sec[i].offset = read_at<uint64_t>(h + 24);
    sec[i].size = read_at<uint64_t>(h + 32);
    sec[i].link = read_at<uint32_t>(h + 40);
    sec[i].info = read_at<uint32_t>(h + 44);
    sec[i].entsize = read_at<uint64_t>(h + 56);
    if (sec[i].offset > bytes || sec[i].size > bytes - sec[i].offset) sec[i].size = 0;  // no bytes
  }
  // A NUL-terminated string at `off` of string table `s` ("" when out of range).
  auto str = [&](uint32_t s, uint64_t off) -> std::string {
    if (s >= shnum || off >= sec[s].size) return {};
    const char* p = reinterpret_cast<const char*>(elf + sec[s].offset + off);
    return std::string(p, strnlen(p, sec[s].size - off));
  };
  auto symbol = [&](uint32_t symtab, uint32_t index) -> std::string {
    if (symtab >= shnum || sec[symtab].entsize < 24) return {};
    const uint64_t off = uint64_t(index) * sec[symtab].entsize;
    if (off + 24 > sec[symtab].size) return {};
    return str(sec[symtab].link, read_at<uint32_t>(elf + sec[symtab].offset + off));
  };
  std::map<std::string, SassKernel> found;
  for (uint16_t i = 0; i < shnum; ++i) {
    const std::string name = str(shstrndx, sec[i].name);
    if (name != ".nv.info" && name.rfind(".nv.info.", 0) != 0) continue;
    const uint8_t* p = elf + sec[i].offset;
    const uint8_t* end = p + sec[i].size;
    while (p + 4 <= end) {
      const uint8_t format = p[0], attr = p[1];
      const uint16_t size = format == kEifmtSval ? read_at<uint16_t>(p + 2) : 0;
      const uint8_t* payload = p + 4;
      if (payload + size > end) break;
      if (size == 8 && (attr == kEiattrRegcount || attr == kEiattrFrameSize)) {
        const std::string kernel = symbol(sec[i].link, read_at<uint32_t>(payload));
        const int value = int(read_at<uint32_t>(payload + 4));
        if (!kernel.empty()) (attr == kEiattrRegcount ? found[kernel].regs : found[kernel].frame_bytes) = value;
      }
      p = payload + size;
    }
  }
  for (uint16_t i = 0; i < shnum; ++i) {  // the older place of the register count
    const std::string name = str(shstrndx, sec[i].name);
    if (name.rfind(".text.", 0) != 0 || (sec[i].info >> 24) == 0) continue;
    SassKernel& k = found[name.substr(6)];
    if (k.regs < 0) k.regs = int(sec[i].info >> 24);
  }
  for (auto& [name, k] : found)
    if (k.regs >= 0) out.emplace(name, k);  // FRAME_SIZE also names device functions: not them

}

namespace {

// Calls fn(arch, bytes, size) for each cubin of one fatbinary (none when p is not one; a cubin
// that does not decompress is skipped).
template <class Fn>
void each_cubin(const uint8_t* p, Fn&& fn) {
  each_entry(p, [&](const FatbinEntry& e) {
    if (e.kind != kKindElf) return;
    if (e.flags & kFlagZstd) {
      std::vector<uint8_t> plain(e.plain_size);
      size_t got = decompress(e, plain.data());
      if (!ZSTD_isError(got)) fn(int(e.arch), plain.data(), got);
    } else {
      fn(int(e.arch), e.payload, size_t(e.size));
    }
  });
}

}  // namespace

// With relocatable device code, nvlink's linked cubin (the registered fatbinary) comes first and
// is what runs; an object's own cubin names a kernel only when the linked one does not.
SassInfo fatbin_sass_info(const void* wrapper_or_fatbin, int cc) {
  const std::vector<const uint8_t*> fatbins = unit_fatbins(wrapper_or_fatbin);
  SassInfo info;
  for (const uint8_t* f : fatbins)  // the architecture the device would load
    each_cubin(f, [&](int arch, const uint8_t*, size_t) {
      if (arch / 10 == cc / 10 && arch <= cc && arch > info.arch) info.arch = arch;
    });
  if (info.arch)
    for (const uint8_t* f : fatbins)
      each_cubin(f, [&](int arch, const uint8_t* elf, size_t bytes) {
        if (arch == info.arch) cubin_kernels(elf, bytes, info.kernels);
      });
  return info;
}

}  // namespace emu
