#pragma once
#include <string>
#include <vector>

namespace emu {

struct PtxEntry {
  int arch = 0;      // 90 for compute_90
  std::string text;  // the PTX, decompressed
};

// Every PTX entry of a registered fatbinary (the wrapper nvcc passes, or the fatbinary itself).
std::vector<PtxEntry> fatbin_ptx_entries(const void* wrapper_or_fatbin);

}  // namespace emu
