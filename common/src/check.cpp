#include "gpu100/check.h"

#include <cublas_v2.h>
#include <fmt/format.h>

#include <cstdlib>

namespace gpu100 {

namespace {
// The name of a cuBLAS status (CUBLAS_STATUS_...), or "status N".
std::string library_status_name(const char* library, int status) {
  if (std::string(library) == "cublas") {
    switch (static_cast<cublasStatus_t>(status)) {
      case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
      case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
      case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
      case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
      case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
      case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
      case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
      case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
      case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
      case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
  }
  return fmt::format("status {}", status);
}
}  // namespace

void throw_library_error(const char* library, int status, const char* expr, const char* file,
                         int line) {
  throw CudaError(
      fmt::format("{}:{}: {}: {}", file, line, expr, library_status_name(library, status)));
}

namespace detail {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  throw CudaError(fmt::format("{}:{}: {}: {}: {}", file, line, expr, cudaGetErrorName(err),
                              cudaGetErrorString(err)));
}

void launch_check(const char* file, int line) {
  cuda_check(cudaGetLastError(), "kernel launch", file, line);
  static const bool sync = [] {
    const char* v = std::getenv("GPU100_SYNC_LAUNCHES");
    return v && *v && std::string(v) != "0";
  }();
  if (sync) cuda_check(cudaDeviceSynchronize(), "kernel execution", file, line);
}

}  // namespace detail

}  // namespace gpu100
