// Device presets and spec files (device_spec.h), and the overflow-mode check they drive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "npuscope/emulator/device.h"
#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

// A JSON spec file in a per-test temp directory, removed at the end.
class SpecFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("npuscope_spec_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& json, const std::string& name = "spec.json") {
    const auto path = dir_ / name;
    std::ofstream(path) << json;
    return path.string();
  }
  // The SpecError message load_spec throws for `json`, or "" if it loads.
  std::string error_of(const std::string& json) {
    try {
      load_spec(write(json));
    } catch (const SpecError& e) {
      return e.what();
    }
    return "";
  }
  // Whether loading `json` fails with a message that names every one of `parts`.
  ::testing::AssertionResult error_names(const std::string& json, std::initializer_list<const char*> parts) {
    const std::string msg = error_of(json);
    for (const char* p : parts) {
      if (msg.find(p) == std::string::npos) {
        return ::testing::AssertionFailure() << json << ": '" << p << "' not in: " << msg;
      }
    }
    return ::testing::AssertionSuccess();
  }
  std::filesystem::path dir_;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(DeviceSpec, Ascend910bFigures) {
  const DeviceSpec s = preset_spec("ascend910b");
  EXPECT_EQ(s.name, "ascend910b");
  EXPECT_EQ(s.cube_cores, 24);
  EXPECT_EQ(s.vector_cores, 48);
  EXPECT_DOUBLE_EQ(s.clock_hz, 1.8e9);
  EXPECT_EQ(s.memory_bytes, 64 * kGiB);
  EXPECT_TRUE(s.cube_fp32);
  EXPECT_TRUE(s.bf16);
  EXPECT_EQ(s.ub_bytes, 192u * 1024);
  EXPECT_EQ(s.l0c_bytes, 128u * 1024);
  EXPECT_EQ(s.l2_bytes, 192ull << 20);
  EXPECT_EQ(s.default_overflow_mode, OverflowMode::kInfNan);
  EXPECT_TRUE(s.supports_inf_nan);
  // 24 x 16·16·16 x 2 x 1.8 GHz ≈ 354 TFLOP/s; int8 twice.
  EXPECT_NEAR(s.cube_peak_f16(), 353.89e12, 0.01e12);
  EXPECT_DOUBLE_EQ(s.cube_peak(true), 2 * s.cube_peak_f16());
  EXPECT_NO_THROW(validate_spec(s));
}

// shared/CALIBRATION.md "Hardware facts": cube cores and clocks give B2 ~354, B3 ~295, B4 ~246
// TFLOP/s f16; B4 has half the HBM, bandwidth and L2. ascend910b stays the B2 under its old name.
TEST(DeviceSpec, The910bSkusCarryTheirCoresClocksAndMemory) {
  const DeviceSpec b1 = preset_spec("ascend910b1"), b2 = preset_spec("ascend910b2");
  const DeviceSpec b3 = preset_spec("ascend910b3"), b4 = preset_spec("ascend910b4");
  EXPECT_EQ(b1.name, "ascend910b1");
  EXPECT_EQ(b4.name, "ascend910b4");
  EXPECT_EQ(b1.cube_cores, 24);
  EXPECT_EQ(b3.cube_cores, 20);
  EXPECT_EQ(b4.vector_cores, 40);
  EXPECT_NEAR(b1.cube_peak_f16(), 363.7e12, 0.1e12);
  EXPECT_NEAR(b2.cube_peak_f16(), 353.9e12, 0.1e12);
  EXPECT_NEAR(b3.cube_peak_f16(), 294.9e12, 0.1e12);
  EXPECT_NEAR(b4.cube_peak_f16(), 245.8e12, 0.1e12);
  EXPECT_EQ(b3.memory_bytes, 64 * kGiB);
  EXPECT_EQ(b4.memory_bytes, 32 * kGiB);
  EXPECT_DOUBLE_EQ(b4.memory_bandwidth, 0.8e12);
  EXPECT_EQ(b4.l2_bytes, 96ull << 20);
  EXPECT_EQ(b2.l2_bytes, 192ull << 20);
  const DeviceSpec legacy = preset_spec("ascend910b");
  EXPECT_EQ(legacy.name, "ascend910b");
  EXPECT_EQ(legacy.cube_peak_f16(), b2.cube_peak_f16());
  EXPECT_EQ(legacy.memory_bandwidth, b2.memory_bandwidth);
  for (const DeviceSpec& s : {b1, b2, b3, b4}) {
    EXPECT_NO_THROW(validate_spec(s)) << s.name;
    EXPECT_EQ(load_spec(s.name).name, s.name);
  }
}

TEST(DeviceSpec, OlderChips) {
  const DeviceSpec s910 = preset_spec("ascend910");
  EXPECT_EQ(s910.cube_cores, 32);
  EXPECT_FALSE(s910.cube_fp32);
  EXPECT_FALSE(s910.bf16);
  EXPECT_FALSE(s910.supports_inf_nan);  // saturation only
  EXPECT_EQ(s910.default_overflow_mode, OverflowMode::kSaturation);
  EXPECT_NEAR(s910.cube_peak_f16(), 262e12, 1e12);  // ~256 TFLOP/s official
  const DeviceSpec s310 = preset_spec("ascend310p");
  EXPECT_EQ(s310.cube_cores, 8);
  EXPECT_DOUBLE_EQ(s310.memory_bandwidth, 204.8e9);
  EXPECT_FALSE(s310.bf16);
  EXPECT_FALSE(s310.supports_inf_nan);
  EXPECT_NEAR(s310.cube_peak_f16(), 70e12, 1e12);
  const DeviceSpec tiny = preset_spec("tiny");
  EXPECT_LT(tiny.memory_bytes, s310.memory_bytes);
  for (const auto& name : preset_names()) {
    EXPECT_NO_THROW(validate_spec(preset_spec(name))) << name;
    EXPECT_EQ(load_spec(name).name, name);
  }
}

TEST(DeviceSpec, UnknownPresetListsThePresets) {
  try {
    preset_spec("ascend950");
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "ascend950")) << msg;
    for (const auto& name : preset_names()) EXPECT_TRUE(contains(msg, name)) << msg;
  }
  // load_spec: neither a preset nor a file.
  try {
    load_spec("no_such_preset_or_file");
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_TRUE(contains(e.what(), "ascend910b")) << e.what();
  }
}

TEST_F(SpecFile, BaseAndOverrides) {
  const std::string path = write(R"({"base": "ascend910", "memory_bytes": 1073741824, "clock_hz": 1.5e9,
                                     "cube_cores": 4, "cube_efficiency": 0.5, "bf16": true,
                                     "default_precision_mode": "force_fp16"})");
  const DeviceSpec s = load_spec(path);
  EXPECT_EQ(s.name, path);
  EXPECT_EQ(s.memory_bytes, kGiB);
  EXPECT_DOUBLE_EQ(s.clock_hz, 1.5e9);
  EXPECT_EQ(s.cube_cores, 4);
  EXPECT_DOUBLE_EQ(s.cube_efficiency, 0.5);
  EXPECT_TRUE(s.bf16);
  EXPECT_EQ(s.default_precision_mode, PrecisionMode::kForceFp16);
  // Untouched fields come from the base.
  EXPECT_EQ(s.vector_cores, 32);
  EXPECT_FALSE(s.supports_inf_nan);
  EXPECT_DOUBLE_EQ(s.memory_bandwidth, 1.2e12);
  // Without a base: ascend910b. An integral float is fine for an integer field.
  const DeviceSpec d = load_spec(write(R"({"memory_bytes": 68719476736.0})", "other.json"));
  EXPECT_EQ(d.cube_cores, 24);
  EXPECT_EQ(d.memory_bytes, 64 * kGiB);
  // A runtime accepts the file as its spec.
  Runtime::configure(RuntimeOptions{.spec = path});
  EXPECT_EQ(Runtime::get().device().spec().cube_cores, 4);
  Runtime::configure({});
}

TEST_F(SpecFile, UnknownFieldIsNamed) {
  // The valid names are listed, and the file.
  EXPECT_TRUE(
      error_names(R"({"base": "tiny", "cube_corez": 4})", {"unknown field 'cube_corez'", "cube_cores", "spec.json"}));
}

TEST_F(SpecFile, BadValuesAreNamed) {
  EXPECT_TRUE(error_names(R"({"cube_cores": "many"})", {"'cube_cores'"}));
  EXPECT_TRUE(error_names(R"({"bf16": 1})", {"'bf16'"}));
  EXPECT_TRUE(error_names(R"({"clock_hz": "fast"})", {"'clock_hz'"}));
  EXPECT_TRUE(error_names(R"({"memory_bytes": -5})", {"'memory_bytes'"}));
  // Integers must be integral and fit: no silent truncation.
  EXPECT_TRUE(error_names(R"({"cube_cores": 2.5})", {"'cube_cores'"}));
  EXPECT_TRUE(error_names(R"({"cube_cores": 1e12})", {"'cube_cores'"}));
  EXPECT_TRUE(error_names(R"({"default_overflow_mode": "wrap"})", {"'default_overflow_mode'"}));
  // Values the cost model divides by.
  EXPECT_TRUE(error_names(R"({"memory_bandwidth": 0})", {"memory_bandwidth"}));
  EXPECT_TRUE(error_names(R"({"vector_efficiency": 1.5})", {"vector_efficiency"}));
  EXPECT_TRUE(error_names(R"({"base": "ascend910", "default_overflow_mode": "inf_nan"})", {"supports_inf_nan"}));
  EXPECT_TRUE(error_names(R"({"base": "ascend950"})", {"spec.json", "ascend910b"}));
  EXPECT_TRUE(error_names(R"([1, 2])", {"JSON object"}));
  EXPECT_TRUE(error_names(R"({"cube_cores": )", {"not valid JSON"}));
}

TEST(DeviceSpec, OverflowModeFollowsTheChip) {
  Runtime::configure(RuntimeOptions{.spec = "ascend910"});
  Device& dev = Runtime::get().device();
  EXPECT_EQ(dev.overflow_mode(), OverflowMode::kSaturation);
  EXPECT_EQ(dev.precision_mode(), PrecisionMode::kAllowFp32ToFp16);
  EXPECT_THROW(dev.set_overflow_mode(OverflowMode::kInfNan), InvalidArgument);
  EXPECT_NO_THROW(dev.set_overflow_mode(OverflowMode::kSaturation));
  EXPECT_THROW(Runtime::configure(RuntimeOptions{.spec = "ascend910", .overflow_mode = OverflowMode::kInfNan}),
               InvalidArgument);
  Runtime::configure(RuntimeOptions{.spec = "ascend910b"});
  Device& b = Runtime::get().device();
  EXPECT_EQ(b.overflow_mode(), OverflowMode::kInfNan);
  b.set_overflow_mode(OverflowMode::kSaturation);
  EXPECT_EQ(b.overflow_mode(), OverflowMode::kSaturation);
}

// Issue 15: out-of-range values wrapped virtual time (a latency of 2^64-1 gave "memory -16231 ns",
// a huge kernel overhead "4895658701402202% busy") or were accepted (clock_hz 1e-308).
TEST_F(SpecFile, OutOfRangeValuesNameFileFieldValueAndRange) {
  EXPECT_TRUE(error_names(R"({"clock_hz": 1e-308})", {"spec.json", "clock_hz = 1e-308", "[1e6, 1e11] Hz"}));
  EXPECT_TRUE(error_names(R"({"launch_latency_ns": 18446744073709551615})", {"launch_latency_ns", "[0, 1e9] ns"}));
  EXPECT_TRUE(error_names(R"({"kernel_overhead_ns": 9000000000000000000})", {"kernel_overhead_ns"}));
  EXPECT_TRUE(error_names(R"({"cube_cores": 0})", {"cube_cores = 0 is out of range [1, 1024]"}));
  EXPECT_TRUE(error_names(R"({"vector_efficiency": 1.5})", {"vector_efficiency = 1.5 is out of range [0.01, 1]"}));
  EXPECT_TRUE(error_names(R"({"memory_bandwidth": 1e300})", {"memory_bandwidth"}));
  // A spec that renames itself is still named by its file in errors.
  EXPECT_TRUE(error_names(R"({"name": "mine", "cube_m": 100000})", {"spec.json", "cube_m"}));
  // The bounds themselves are accepted.
  EXPECT_EQ(error_of(R"({"clock_hz": 1e6, "launch_latency_ns": 1000000000, "kernel_overhead_ns": 1000000000,
                         "cube_cores": 1, "cube_efficiency": 0.01, "memory_bytes": 4096})"),
            "");
}

TEST(DeviceSpec, RangesTableIsInTheDocs) {
  const auto doc = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "emulator.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(contains(text, spec_ranges_markdown()))
      << "docs/emulator.md's \"Spec value ranges\" table is out of date; replace it with:\n"
      << spec_ranges_markdown();
}
