#pragma once
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

}  // namespace emu
