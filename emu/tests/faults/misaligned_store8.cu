// Planted bug: a misaligned 8-byte store. Records of a 4-byte key and an 8-byte value are packed
// into a byte buffer with a 12-byte stride and the value at byte 4, so thread 0 of block 0 stores
// a 64-bit value at an address 4 bytes past an 8-byte boundary. Expected:
// cudaErrorMisalignedAddress and the emulator naming that store. --fixed: a 16-byte stride with
// the value at byte 8 keeps every store aligned, and the records read back intact.
#include <vector>

#include "fault_common.h"

constexpr int kRecords = 128;

__global__ void k_pack(unsigned char* buf, int stride, int value_at) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned char* rec = buf + size_t(i) * stride;
  *reinterpret_cast<int*>(rec) = i;
  // The planted bug: the value at byte 4 of a 12-byte record is not 8-byte aligned.
  *reinterpret_cast<unsigned long long*>(rec + value_at) = 0x100000000ull * i + 7;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  const int stride = fixed ? 16 : 12, value_at = fixed ? 8 : 4;
  unsigned char* buf = nullptr;
  CHECK(cudaMalloc(&buf, kRecords * 16));
  k_pack<<<kRecords / 64, 64>>>(buf, stride, value_at);
  if (!fixed) return verdict("misaligned_store8", launch_result(), cudaErrorMisalignedAddress);
  CHECK(launch_result());
  std::vector<unsigned char> got(kRecords * 16);
  CHECK(cudaMemcpy(got.data(), buf, got.size(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kRecords; ++i) {
    int key;
    unsigned long long value;
    std::memcpy(&key, &got[i * 16], 4);
    std::memcpy(&value, &got[i * 16 + 8], 8);
    if (key != i || value != 0x100000000ull * i + 7)
      return fixed_wrong("misaligned_store8", "record %d = (%d, %llx)", i, key, value);
  }
  return fixed_ok("misaligned_store8");
}
