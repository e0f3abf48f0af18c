// RAII owner of page-locked host memory. Move-only; sizes are in elements.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu100/check.h"

namespace gpu100 {

// Page-locked host memory: needed for truly asynchronous copies and full PCIe bandwidth.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMallocHost(&ptr_, count_ * sizeof(T)));
  }
  ~PinnedBuffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  T& operator[](size_t i) { return ptr_[i]; }
  const T& operator[](size_t i) const { return ptr_[i]; }
  T* begin() { return ptr_; }
  T* end() { return ptr_ + count_; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace gpu100
