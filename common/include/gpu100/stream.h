// RAII owners of streams, events and graphs. Move-only; get() gives the CUDA handle.
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "gpu100/check.h"

namespace gpu100 {

namespace detail {
// One move-only owner for every CUDA handle type: Destroy is the matching cudaXxxDestroy.
template <class H, cudaError_t (*Destroy)(H)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(H h) : h_(h) {}
  ~Owned() {
    if (h_) Destroy(h_);  // no check: destructors must not throw
  }
  Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Owned& operator=(Owned&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  H get() const { return h_; }

 protected:
  H h_ = nullptr;
};
}  // namespace detail

// A non-blocking stream: no implicit synchronization with the legacy default stream (where the
// benchmark records its events), so work on it is ordered only by what the code says.
class Stream : public detail::Owned<cudaStream_t, cudaStreamDestroy> {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&h_, cudaStreamNonBlocking)); }
};

// An event; timing events cost a little more to record, so ordering-only events opt out.
class Event : public detail::Owned<cudaEvent_t, cudaEventDestroy> {
 public:
  explicit Event(bool timing = false) {
    CUDA_CHECK(cudaEventCreateWithFlags(&h_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
};

// A graph (e.g. from stream capture) and its executable instance.
class Graph : public detail::Owned<cudaGraph_t, cudaGraphDestroy> {
 public:
  using Owned::Owned;
};
class GraphExec : public detail::Owned<cudaGraphExec_t, cudaGraphExecDestroy> {
 public:
  GraphExec() = default;
  explicit GraphExec(const Graph& g) { CUDA_CHECK(cudaGraphInstantiate(&h_, g.get(), 0)); }
};

}  // namespace gpu100
