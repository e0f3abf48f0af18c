// RAII owner of device memory (pinned host memory: pinned.h). Move-only; sizes are in elements.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "gpu100/check.h"

namespace gpu100 {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMalloc(&ptr_, bytes()));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void upload(const T* host, size_t count) {
    if (count > count_) throw CudaError("DeviceBuffer::upload: more elements than allocated");
    CUDA_CHECK(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void download(T* host, size_t count) const {
    if (count > count_) throw CudaError("DeviceBuffer::download: more elements than allocated");
    CUDA_CHECK(cudaMemcpy(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    download(host.data(), count_);
    return host;
  }
  // Every byte 0xFF: NaN for floats and halves, -1 for signed integers, so an element a kernel
  // forgets to write fails the comparison.
  void poison() { CUDA_CHECK(cudaMemset(ptr_, 0xFF, bytes())); }
  void zero() { CUDA_CHECK(cudaMemset(ptr_, 0, bytes())); }

 private:
  void reset() {
    if (ptr_) cudaFree(ptr_);  // no check: destructors must not throw
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace gpu100
