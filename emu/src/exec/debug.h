// Debugging aids, chosen by environment variables that scripts/emulate sets from its options
// (emu/README.md, "Debugging"):
//   GPU100_EMU_TRACE=KERNEL[,block=X.Y.Z][,thread=X.Y.Z|warp=N][,launch=N]
//       every instruction one thread (or one warp) executes: source line, lanes, the registers
//       it writes, the memory it touches; for a warp also where it splits and meets again.
//   GPU100_EMU_TRACE_LIMIT=N      stop printing after N instructions (default 10000)
//   GPU100_EMU_WATCH=ADDRESS[:BYTES][,ADDRESS[:BYTES]...]
//       every store (with GPU100_EMU_WATCH_READS=1 every load too) touching those bytes
//   GPU100_EMU_ACCESS_MAP=KERNEL[,block=X.Y.Z][,launch=N]   (and GPU100_EMU_ACCESS_MAP_FILE)
//       every access of one block of one launch, written to a file for scripts/access_map.py
//
// With none of them set nothing here runs: the scheduler's hot loop is compiled twice
// (run_warp<false> is the normal one) and the memory hooks share the checks' one branch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "emu.h"

namespace emu {

struct Exec;
struct Launch;
struct Block;
struct Warp;

namespace debug {

extern bool g_enabled;     // any option is set
extern bool g_trace_now;   // the launch running now holds the traced warp

// Reads and checks the options (once); a malformed one ends the program with status 2.
void configure();
// The runtime's kernels by mangled name, before the first launch: an option naming none of
// them ends the program with status 2.
void check_kernels(const std::vector<std::string>& mangled);

// Brackets every launch (the scheduler's run_launch).
void launch_begin(Launch& l);
void launch_end(Launch& l);

// Whether warp w of block b is the traced one (only asked while g_trace_now).
bool traced(const Block& b, const Warp& w);

// The traced warp, from run_warp<true>: before each instruction (mask: the lanes at it,
// active: those whose guard holds), when the warp stops for now, and when lanes of a
// collective or a barrier resume.
void step(Exec& x, uint32_t pc, uint32_t mask, uint32_t active);
void pause(Exec& x);

// Every memory access, from the checks' hook (exec/sanitizer.h).
void access(Exec& x, uint32_t pc, Space space, uint64_t a, uint32_t size, int lane, uint32_t kind);

// The host's writes to device memory (memset, copies): the watch reports them too. Called
// before the bytes change, and host_write_done after.
void host_write(const void* dst, uint64_t bytes, const char* what, const void* src);
void host_write_done();

// Device-to-host copies, remembered so that a program's check can ask where an element of its
// host copy came from (gpu100_emu_device_address).
void note_download(const void* host, uint64_t device, uint64_t bytes);

}  // namespace debug
}  // namespace emu
