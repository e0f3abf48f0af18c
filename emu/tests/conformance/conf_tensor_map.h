// cuTensorMapEncodeTiled for the conformance programs that build tensor maps (hopper_gemm,
// tensor_map, multicast, tensor_store_box), reached through the runtime's
// cudaGetDriverEntryPointByVersion: no link against libcuda and no dlopen, on a GPU as under the
// emulator.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include "conf_common.h"

// Which outcome of the lookup is recorded as the check "cudaGetDriverEntryPointByVersion:
// cuTensorMapEncodeTiled, 12000" (expected status: cudaDriverEntryPointSuccess).
enum class ConfLookupCheck {
  always,      // one check whatever the outcome
  if_missing,  // a (failing) check only when the function is missing
  none,        // no check: the caller records its own
};

// The function with the CUDA 12.0 signature, or nullptr when the driver does not have it. A
// failing call of cudaGetDriverEntryPointByVersion itself ends the program (CUDA_CHECK).
inline PFN_cuTensorMapEncodeTiled_v12000 conf_encode_tiled(ConfLookupCheck check) {
  cudaDriverEntryPointQueryResult status;
  void* fn = nullptr;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &status));
  if (check == ConfLookupCheck::always || (check == ConfLookupCheck::if_missing && !fn))
    conf_check("cudaGetDriverEntryPointByVersion", "cuTensorMapEncodeTiled, 12000", int(status),
               int(cudaDriverEntryPointSuccess));
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}
