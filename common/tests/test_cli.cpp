#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gpu100/cli.h"
#include "internal.h"

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
    int rc = gpu100::CliAccess::parse(cli, a.argc(), a.argv.data());
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
  EXPECT_NE(f.last_err.find("day999: error: --n must be between 1 and 1099511627776, got '0'"),
            std::string::npos);
}

TEST(Cli, OverMaximumIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--m", "1048577"}), gpu100::kUsage);
  EXPECT_NE(f.last_err.find("--m must be between 1 and 1048576, got '1048577'"), std::string::npos);
  Fixture g;
  EXPECT_EQ(g.parse({"--m", "1048576"}), -1);
  EXPECT_EQ(g.m, 1048576);
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

TEST(Cli, ErrorIsOneLine) {
  Fixture f;
  f.parse({"--n", "abc"});
  ASSERT_FALSE(f.last_err.empty());
  EXPECT_EQ(f.last_err.find('\n'), f.last_err.size() - 1);
  EXPECT_EQ(f.last_err.rfind("day999: error: ", 0), 0u);
}

TEST(Cli, ChoiceMustBeKnown) {
  gpu100::Cli cli{"t", "day999", "testing", "hash"};
  std::string mode = "a";
  cli.option("mode", mode, {"a", "b"}, "mode");
  Args bad({"--mode", "c"});
  testing::internal::CaptureStderr();
  EXPECT_EQ(gpu100::CliAccess::parse(cli, bad.argc(), bad.argv.data()), gpu100::kUsage);
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

// Every numeric option refuses what its type cannot hold, quoting the text as typed (a
// conversion must not saturate 10^23 to INT64_MAX or wrap -1 into an unsigned seed).
struct BadNumber {
  std::vector<std::string> args;
  const char* quoted;  // what the message must quote
};

void PrintTo(const BadNumber& b, std::ostream* os) {
  for (const auto& a : b.args) *os << a << ' ';
}

class NumericOptions : public testing::TestWithParam<BadNumber> {};

TEST_P(NumericOptions, RefuseWithExit2AndQuoteTheTypedValue) {
  Fixture f;
  int block = 256;
  double fraction = 0.5;
  f.cli.option("block", block, "threads per block", 32, 1024);
  f.cli.option("fraction", fraction, "a fraction", 0.0, 1.0);
  const uint64_t seed_before = f.cli.seed();
  EXPECT_EQ(f.parse(GetParam().args), gpu100::kUsage);
  EXPECT_NE(f.last_err.find(std::string("'") + GetParam().quoted + "'"), std::string::npos)
      << f.last_err;
  EXPECT_EQ(f.last_err.rfind("day999: error: --", 0), 0u) << f.last_err;
  EXPECT_EQ(f.last_err.find('\n'), f.last_err.size() - 1) << f.last_err;  // one line
  EXPECT_EQ(f.last_err.find("9223372036854775807"), std::string::npos) << f.last_err;
  EXPECT_EQ(f.n, 1000);  // nothing half-converted is left in the targets
  EXPECT_EQ(block, 256);
  EXPECT_EQ(f.cli.seed(), seed_before);
}

const BadNumber kBadNumbers[] = {
    {{"--n", "99999999999999999999999"}, "99999999999999999999999"},
    {{"--n", "9223372036854775808"}, "9223372036854775808"},  // INT64_MAX + 1
    {{"--n", "-9223372036854775809"}, "-9223372036854775809"},
    {{"--n", "-7"}, "-7"},
    {{"--n", "12abc"}, "12abc"},
    {{"--n", "1.5"}, "1.5"},
    {{"--n", "1e3"}, "1e3"},
    {{"--n", "0x10"}, "0x10"},
    {{"--n", "+5"}, "+5"},
    {{"--n", " 5"}, " 5"},
    {{"--n", ""}, ""},
    {{"--n=-1"}, "-1"},
    {{"--seed", "99999999999999999999999"}, "99999999999999999999999"},
    {{"--seed", "18446744073709551616"}, "18446744073709551616"},  // 2^64
    {{"--seed", "-1"}, "-1"},
    {{"--seed", "abc"}, "abc"},
    {{"--iters", "99999999999999999999"}, "99999999999999999999"},
    {{"--iters", "4294967297"}, "4294967297"},  // 2^32 + 1: wraps to 1 in 32 bits
    {{"--iters", "0"}, "0"},
    {{"--iters", "1000001"}, "1000001"},
    {{"--warmup", "-1"}, "-1"},
    {{"--warmup", "99999999999999999999"}, "99999999999999999999"},
    {{"--device", "99999999999"}, "99999999999"},
    {{"--device", "-1"}, "-1"},
    {{"--device", "1024"}, "1024"},
    {{"--block", "4294967328"}, "4294967328"},  // 2^32 + 32: wraps to 32 in 32 bits
    {{"--block", "2048"}, "2048"},
    {{"--block", "31"}, "31"},
    {{"--fraction", "1e999"}, "1e999"},
    {{"--fraction", "1e-999"}, "1e-999"},
    {{"--fraction", "nan"}, "nan"},
    {{"--fraction", "inf"}, "inf"},
    {{"--fraction", "0.5x"}, "0.5x"},
    {{"--fraction", "1.0000001"}, "1.0000001"},
    {{"--fraction", "-0.25"}, "-0.25"},
};
INSTANTIATE_TEST_SUITE_P(Cli, NumericOptions, testing::ValuesIn(kBadNumbers));

TEST(Cli, NumericOptionsAcceptTheirWholeRange) {
  gpu100::Cli cli{"t", "day999", "testing", "hash"};  // no memory estimate: sizes alone
  int64_t n = 1000;
  int block = 256;
  double fraction = 0.5;
  cli.size("n", n, 17, "elements");
  cli.option("block", block, "threads per block", 32, 1024);
  cli.option("fraction", fraction, "a fraction", 0.0, 1.0);
  Args top({"--n", "1099511627776", "--seed", "18446744073709551615", "--iters", "1000000",
            "--warmup", "100000", "--device", "1023", "--block=1024", "--fraction", "1"});
  EXPECT_EQ(gpu100::CliAccess::parse(cli, top.argc(), top.argv.data()), -1);
  EXPECT_EQ(n, int64_t(1) << 40);
  EXPECT_EQ(cli.seed(), UINT64_MAX);
  EXPECT_EQ(cli.iters(), 1000000);
  EXPECT_EQ(gpu100::CliAccess::warmup(cli), 100000);
  EXPECT_EQ(gpu100::CliAccess::device_index(cli), 1023);
  EXPECT_EQ(block, 1024);
  EXPECT_EQ(fraction, 1.0);

  gpu100::Cli low{"t", "day999", "testing", "hash"};
  low.size("n", n, 17, "elements");
  low.option("block", block, "threads per block", 32, 1024);
  low.option("fraction", fraction, "a fraction", 0.0, 1.0);
  Args bottom({"--n", "1", "--seed", "0", "--iters", "1", "--warmup", "0", "--device", "0",
               "--block", "32", "--fraction", "2.5e-1"});
  EXPECT_EQ(gpu100::CliAccess::parse(low, bottom.argc(), bottom.argv.data()), -1);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(low.seed(), 0u);
  EXPECT_EQ(low.iters(), 1);
  EXPECT_EQ(block, 32);
  EXPECT_EQ(fraction, 0.25);
}

TEST(Cli, GivenSizeWinsOverQuickEvenWhenEqualToTheDefault) {
  Fixture f;
  EXPECT_EQ(f.parse({"--quick", "--n", "1000"}), -1);
  EXPECT_EQ(f.n, 1000);
  EXPECT_EQ(f.m, 3);
}

TEST(Cli, OptionGivenTwiceIsUsageError) {
  Fixture f;
  EXPECT_EQ(f.parse({"--n", "5", "--n", "6"}), gpu100::kUsage);
}

// The header's problem line (and the report's problem, from the same list) is every numeric
// option the day declares, as parsed; not the harness's own (--seed, --iters, ...).
TEST(Cli, HeaderShowsTheDaysNumericOptionsAsParsed) {
  Fixture f;
  int radius = 4;
  double fraction = 0.5;
  f.cli.option("radius", radius, "blur radius", 1, 15);
  f.cli.option("hot-fraction", fraction, "a fraction", 0.0, 1.0);
  ASSERT_EQ(f.parse({"--quick", "--radius", "3", "--seed", "9"}), -1);
  gpu100::DeviceInfo dev;
  dev.name = "Test GPU";
  const std::string h = gpu100::run_header(f.cli, dev);
  EXPECT_NE(h.find("problem: n=17 m=3 radius=3 hot-fraction=0.5 (--quick)"), std::string::npos) << h;
  EXPECT_EQ(h.find("seed"), std::string::npos) << h;
}

TEST(NoDevice, SkipUnlessRequired) {
  EXPECT_EQ(gpu100::no_device_exit_code(false), 77);
  EXPECT_EQ(gpu100::no_device_exit_code(true), 1);
}
