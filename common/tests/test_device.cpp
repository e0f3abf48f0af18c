#include <gtest/gtest.h>

#include "gpu100/device.h"
#include "internal.h"

TEST(Limits, DramBandwidthIsDoubleDataRateTimesBusWidth) {
  // H100 SXM5: 2619 MHz HBM3 clock, 5120-bit bus -> 3352 GB/s.
  EXPECT_NEAR(gpu100::dram_gbps(2619000, 5120), 3352.3, 0.1);
  // A100 40GB: 1215 MHz, 5120-bit -> 1555 GB/s.
  EXPECT_NEAR(gpu100::dram_gbps(1215000, 5120), 1555.2, 0.1);
}

TEST(Limits, Fp32PeakFromLanesAndClock) {
  // H100 SXM5: 132 SMs x 128 lanes x 2 FLOP x 1.98 GHz = 66.9 TFLOP/s.
  EXPECT_NEAR(gpu100::fp32_tflops(132, gpu100::fp32_lanes_per_sm(9, 0), 1980000), 66.9, 0.1);
  // A100: 108 SMs x 64 lanes x 2 x 1.41 GHz = 19.5 TFLOP/s.
  EXPECT_NEAR(gpu100::fp32_tflops(108, gpu100::fp32_lanes_per_sm(8, 0), 1410000), 19.5, 0.1);
}

TEST(Limits, LanesPerSmByArchitecture) {
  EXPECT_EQ(gpu100::fp32_lanes_per_sm(7, 0), 64);
  EXPECT_EQ(gpu100::fp32_lanes_per_sm(8, 0), 64);
  EXPECT_EQ(gpu100::fp32_lanes_per_sm(8, 6), 128);
  EXPECT_EQ(gpu100::fp32_lanes_per_sm(8, 9), 128);
  EXPECT_EQ(gpu100::fp32_lanes_per_sm(9, 0), 128);
  EXPECT_EQ(gpu100::fp32_lanes_per_sm(1, 0), 0);  // unknown
}

TEST(Limits, TensorPeakOfH100) {
  gpu100::DeviceInfo d;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.sm_clock_khz = 1830000;
  EXPECT_NEAR(d.peak_fp16_tensor_tflops(), 989.4, 0.5);
}

TEST(Limits, EightBitTensorPeaks) {
  gpu100::DeviceInfo h100;
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.sm_clock_khz = 1830000;
  EXPECT_NEAR(h100.peak_int8_tensor_tops(), 1978.7, 0.5);  // datasheet: 1979 TOPS dense
  EXPECT_NEAR(h100.peak_fp8_tensor_tflops(), 1978.7, 0.5);
  gpu100::DeviceInfo a100;
  a100.cc_major = 8;
  a100.sm_count = 108;
  a100.sm_clock_khz = 1410000;
  EXPECT_NEAR(a100.peak_int8_tensor_tops(), 623.7, 0.5);   // datasheet: 624 TOPS dense
  EXPECT_EQ(a100.peak_fp8_tensor_tflops(), 0.0);           // no fp8 before sm_89
}

TEST(Limits, VersionStrings) {
  EXPECT_EQ(gpu100::cuda_version_string(13000), "13.0");
  EXPECT_EQ(gpu100::cuda_version_string(12080), "12.8");
  gpu100::DeviceInfo d;
  d.cc_major = 9;
  d.cc_minor = 0;
  EXPECT_EQ(d.cc_string(), "9.0");
  EXPECT_EQ(d.cc(), 90);
}
