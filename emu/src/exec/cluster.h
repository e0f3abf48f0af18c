// Thread block clusters (sm_90): the cluster special registers, mapa / getctarank, distributed
// shared memory (a shared::cluster address names a CTA of the cluster), barrier.cluster, and what
// the scheduler needs to keep a cluster's blocks resident together.
//
// A shared::cluster address is a shared-window offset whose bits 24-28 hold the target CTA's
// rank plus one (0: the executing CTA itself, so every shared::cta address is also a valid
// shared::cluster address of the CTA's own memory, as the ISA defines the windows). mapa sets
// those bits; the generic form keeps the shared window's base.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/machine.h"

namespace emu::cluster {

constexpr uint32_t kRankShift = 24;
constexpr uint64_t kOffsetMask = (1u << kRankShift) - 1;
constexpr int8_t kBarrier = 16;  // Warp::park_bar of lanes waiting at barrier.cluster.wait

struct State;

// One block's part in its cluster.
struct Cta {
  State* cl = nullptr;
  Block* block = nullptr;
  uint32_t rank = 0;
  uint64_t cluster = 0;           // linear index of the cluster in the grid
  std::vector<uint32_t> arrived;  // per thread: 1 + the phase it arrived at and has not waited
                                  // for yet; 0: not arrived
};

// One cluster while its blocks run.
struct State {
  uint64_t index = 0;
  Cta* cta[16] = {};
  bool exited[16] = {};
  uint32_t nctas = 0, exited_ctas = 0;
  uint32_t phase = 0;    // barrier.cluster phases completed
  uint32_t arrived = 0;  // non-exited threads that arrived in the current phase
  uint32_t alive = 0;    // threads of the cluster that have not exited
};

// The clusters of one launch (made by Scope when the launch has clusters or the kernel uses any).
struct Clusters {
  Launch* l = nullptr;
  uint32_t size = 1;
  std::unordered_map<const Block*, std::unique_ptr<Cta>> ctas;
  std::unordered_map<uint64_t, State> live;
};

class Scope {
 public:
  explicit Scope(Launch& l);
  ~Scope();

 private:
  Launch& l_;
  std::unique_ptr<Clusters> c_;
};

// The linear index of the n-th block dispatched: the blocks of one cluster one after another.
uint64_t dispatched(const Launch& l, uint64_t n);
// A block starts (its id set) / has finished (every thread exited).
void block_start(Block& b);
void block_done(Block& b);
// Threads `lanes` of warp w exited.
void exited(Block& b, Warp& w, uint32_t lanes);
// barrier.cluster.arrive / wait by the active lanes (Ctl::cluster): advances or parks them.
void barrier(Exec& x, const Inst& in, uint32_t active);
// Every warp of the blocks [first, first + n) waits and none can go on: the report, thrown.
[[noreturn]] void deadlock(const Launch& l, Block* first, size_t n);

uint64_t sreg(const Exec& x, uint32_t id, int lane);
// A shared access whose address carries a rank: the target CTA's bytes (checked).
uint8_t* remote_shared(Exec& x, uint64_t a, uint32_t size, int lane, bool write);
// The block a shared-window offset of x's block names (x's own block without rank bits), or
// nullptr when it names none.
Block* target(const Exec& x, uint64_t a);
// For messages: "block (x,y,z) (rank r of cluster (cx,cy,cz))".
std::string name(const Block& b);

}  // namespace emu::cluster
