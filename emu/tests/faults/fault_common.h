// Host-side helpers shared by the planted-bug programs (emu/tests/faults/*.cu).
//
// The exit status is each program's contract with its test in faults.cmake:
//   1   the planted bug was stopped with the expected error (what the test expects)
//   0   the bug went unnoticed (the test fails), or --fixed ran clean
//   2   a different error, or a CUDA call outside the planted bug failed
//   3   --fixed ran but computed a wrong result
//   77  no CUDA device: the program prints "SKIP: no CUDA device" and runs nothing
//
// Only host code lives here, so every kernel fault is reported at a line of the program itself.
#pragma once

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Exit 2 on a failing call outside the planted bug: nothing after it would be worth reading.
#define CHECK(call)                                                         \
  do {                                                                      \
    const cudaError_t e_ = (call);                                          \
    if (e_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_)); \
      std::exit(2);                                                         \
    }                                                                       \
  } while (0)

// Exits 77 when there is no device to run on.
inline void require_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device\n");
    std::exit(77);
  }
}

// True for the control run, `PROGRAM --fixed`: the same kernel with the bug corrected.
inline bool wants_fixed(int argc, char** argv) {
  return argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
}

// A bad configuration is reported at once; a fault inside the kernel, on hardware, only at the
// next synchronization (the emulator already knows at the launch). Either way one of the two.
inline cudaError_t launch_result() {
  const cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

// Exit 1 (the status the test expects) only for the expected error; 0 when the bug went
// unnoticed, so the test fails; 2 for a different error.
inline int verdict(const char* what, cudaError_t got, cudaError_t want) {
  std::fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorName(got), cudaGetErrorString(got));
  if (got == want) return 1;
  std::fprintf(stderr, "%s: expected %s\n", what, cudaGetErrorName(want));
  return got == cudaSuccess ? 0 : 2;
}

// Exit 3 with "WHAT --fixed: <message>": the corrected kernel ran but its result is wrong.
__attribute__((format(printf, 2, 3))) inline int fixed_wrong(const char* what, const char* fmt,
                                                             ...) {
  std::fprintf(stderr, "%s --fixed: ", what);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  return 3;
}

// Exit 0 with the only line a clean --fixed run may print to stderr (its test anchors on it).
inline int fixed_ok(const char* what) {
  std::fprintf(stderr, "%s --fixed: ok\n", what);
  return 0;
}
