#include <gtest/gtest.h>

#include <vector>

#include "gpu100/cli.h"

namespace {

struct Args {
  std::vector<std::string> words;
  std::vector<const char*> argv;
  explicit Args(std::vector<std::string> w) : words(std::move(w)) {
    words.insert(words.begin(), "day999");
    for (auto& s : words) argv.push_back(s.c_str());
  }
  int argc() const { return int(argv.size()); }
};

struct Fixture {
  gpu100::Cli cli{"test program", "day999", "testing", "hash"};
  int64_t n = 1000;
  int64_t m = 10;
  Fixture() {
    cli.size("n", n, 17, "elements");
    cli.size("m", m, 3, "rows", 1 << 20);
    cli.kernels({"naive", "fast"});
    cli.device_bytes([this] { return double(n) * double(m) * 4.0; });
  }
  int parse(std::vector<std::string> words) {
    Args a(std::move(words));
    testing::internal::CaptureStderr();
    int rc = cli.parse(a.argc(), a.argv.data());
    last_err = testing::internal::GetCapturedStderr();
    return rc;
  }
  std::string last_err;
};

}  // namespace

TEST(Cli, DefaultsParse) {
  Fixture f;
  EXPECT_EQ(f.parse({}), -1);
  EXPECT_EQ(f.n, 1000);
  EXPECT_TRUE(f.cli.want("naive"));
  EXPECT_TRUE(f.cli.want("fast"));
  EXPECT_EQ(f.cli.seed(), 42u);
}

TEST(Cli, QuickUsesQuickSizesUnlessGiven) {
  Fixture f;
  EXPECT_EQ(f.parse({"--quick", "--m", "5"}), -1);
  EXPECT_EQ(f.n, 17);
  EXPECT_EQ(f.m, 5);
  EXPECT_TRUE(f.cli.quick());
}

TEST(Cli, ZeroSizeIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--n", "0"}), gpu100::kUsage);
  EXPECT_NE(f.last_err.find("day999: error: --n must be a positive integer"), std::string::npos);
}

TEST(Cli, NegativeSizeIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--n", "-5"}), gpu100::kUsage);
}

TEST(Cli, MalformedNumberIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--n", "12abc"}), gpu100::kUsage);
  Fixture g;
  EXPECT_EQ(g.parse({"--n", "1.5"}), gpu100::kUsage);
}

TEST(Cli, OverMaximumIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--m", "2000000"}), gpu100::kUsage);
  EXPECT_NE(f.last_err.find("maximum"), std::string::npos);
}

TEST(Cli, TooMuchMemoryIsUsageErrorBeforeAnyDevice) {
  Fixture f;  // 2^38 * 2^20 * 4 bytes: far more than 1 TiB
  EXPECT_EQ(f.parse({"--n", "274877906944", "--m", "1048576"}), gpu100::kUsage);
  EXPECT_NE(f.last_err.find("device memory"), std::string::npos);
}

TEST(Cli, UnknownKernelListsTheKnownOnes) {
  Fixture f;
  EXPECT_EQ(f.parse({"--kernel", "warp"}), gpu100::kUsage);
  EXPECT_NE(f.last_err.find("naive, fast"), std::string::npos);
}

TEST(Cli, KernelSelection) {
  Fixture f;
  EXPECT_EQ(f.parse({"--kernel", "fast"}), -1);
  EXPECT_TRUE(f.cli.want("fast"));
  EXPECT_FALSE(f.cli.want("naive"));
}

TEST(Cli, UnknownOptionIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--bogus"}), gpu100::kUsage);
}

TEST(Cli, ZeroItersIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--iters", "0"}), gpu100::kUsage);
}

TEST(Cli, ErrorIsOneLine) {
  Fixture f;
  f.parse({"--n", "abc"});
  ASSERT_FALSE(f.last_err.empty());
  EXPECT_EQ(f.last_err.find('\n'), f.last_err.size() - 1);
  EXPECT_EQ(f.last_err.rfind("day999: error: ", 0), 0u);
}

TEST(Cli, IntOptionRangeAndChoices) {
  gpu100::Cli cli{"t", "day999", "testing", "hash"};
  int block = 256;
  std::string mode = "a";
  cli.option("block", block, "threads per block", 32, 1024);
  cli.option("mode", mode, {"a", "b"}, "mode");
  Args bad({"--block", "4096"});
  testing::internal::CaptureStderr();
  EXPECT_EQ(cli.parse(bad.argc(), bad.argv.data()), gpu100::kUsage);
  testing::internal::GetCapturedStderr();
}

TEST(Cli, ChoiceMustBeKnown) {
  gpu100::Cli cli{"t", "day999", "testing", "hash"};
  std::string mode = "a";
  cli.option("mode", mode, {"a", "b"}, "mode");
  Args bad({"--mode", "c"});
  testing::internal::CaptureStderr();
  EXPECT_EQ(cli.parse(bad.argc(), bad.argv.data()), gpu100::kUsage);
  testing::internal::GetCapturedStderr();
}

TEST(Cli, ValidatorRejects) {
  Fixture f;
  f.cli.validate([&] { return f.n < f.m ? std::string("--n must be at least --m") : std::string(); });
  EXPECT_EQ(f.parse({"--n", "2", "--m", "3"}), gpu100::kUsage);
}

TEST(Cli, HelpExitsZero) {
  Fixture f;
  testing::internal::CaptureStdout();
  EXPECT_EQ(f.parse({"--help"}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("--kernel"), std::string::npos);
}

TEST(NoDevice, SkipUnlessRequired) {
  EXPECT_EQ(gpu100::no_device_exit_code(false), 77);
  EXPECT_EQ(gpu100::no_device_exit_code(true), 1);
}
