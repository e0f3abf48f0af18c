// Error checking for CUDA runtime calls, kernel launches and cuBLAS.
// A failed check throws gpu100::CudaError carrying "file:line: expr: ErrorName: text";
// gpu100::run() catches it, prints it and exits 1.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gpu100 {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// For a library status (cuBLAS, cuRAND, cuSPARSE, ...) that is not success: library is its
// name in the message.
[[noreturn]] void throw_library_error(const char* library, int status, const char* expr,
                                      const char* file, int line);

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
inline void cuda_check(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, expr, file, line);
}
// cuBLAS statuses are plain ints here so this header needs no library headers.
inline void cublas_check(int status, const char* expr, const char* file, int line) {
  if (status != 0) throw_library_error("cublas", status, expr, file, line);
}
void launch_check(const char* file, int line);
}  // namespace detail

}  // namespace gpu100

#define CUDA_CHECK(expr) ::gpu100::detail::cuda_check((expr), #expr, __FILE__, __LINE__)
#define CUBLAS_CHECK(expr) \
  ::gpu100::detail::cublas_check(static_cast<int>(expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: configuration errors show up in cudaGetLastError. With
// GPU100_SYNC_LAUNCHES=1 in the environment it also synchronizes, so an asynchronous fault is
// reported at the launch that caused it (slow; for debugging).
#define LAUNCH_CHECK() ::gpu100::detail::launch_check(__FILE__, __LINE__)
