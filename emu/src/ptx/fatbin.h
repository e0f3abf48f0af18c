#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace emu {

struct PtxEntry {
  int arch = 0;      // 90 for compute_90
  int unit = 0;      // 0: the registered fatbinary; 1, 2, ...: the objects a -rdc link joined
  std::string text;  // the PTX, decompressed
};

// Every PTX entry of a registered fatbinary (the wrapper nvcc passes, or the fatbinary itself).
// A program linked from relocatable device code (-rdc=true) registers nvlink's fatbinary, which
// holds only the linked SASS; its wrapper (version 2) points at a null-terminated list of the
// fatbinaries of the objects it linked, each with its own PTX: those entries come as units 1..
std::vector<PtxEntry> fatbin_ptx_entries(const void* wrapper_or_fatbin);

// What ptxas decided for one kernel, read from the SASS (the cubin, an ELF file) in the
// fatbinary: the attributes of the ELF's .nv.info section.
struct SassKernel {
  int regs = -1;        // EIATTR_REGCOUNT: registers per thread
  int frame_bytes = 0;  // EIATTR_FRAME_SIZE: the thread's stack frame (local memory)
};
struct SassInfo {
  int arch = 0;  // the cubin's architecture (90 for sm_90); 0: no cubin runs on the device
  std::map<std::string, SassKernel> kernels;  // by mangled name
};

// The kernels of the cubins that a device of compute capability `cc` (90 for 9.0) would load:
// those of its major version with the highest minor version not above its own (SASS runs only
// there). Cubins of every unit (see above) are read. arch 0 when the program has none.
SassInfo fatbin_sass_info(const void* wrapper_or_fatbin, int cc);

// The .nv.info attributes of one cubin (exposed for tests).
void cubin_kernels(const uint8_t* elf, size_t bytes, std::map<std::string, SassKernel>& out);

}  // namespace emu
