// The "must show": `npuscope exec` on a ResNet-18 sized ONNX model, on cpu and npu.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cli_test_util.h"
#include "npuscope/emulator/npy.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
namespace emu = npuscope::emulator;

namespace {

std::vector<double> run_resnet(const std::string& device_flags, const std::string& name) {
  const auto dir = temp_dir(name);
  const auto r = run_command(npuscope_cmd(std::string("exec --model ") + NPUSCOPE_RESNET18_ONNX + " --seed 3 " +
                                          device_flags + " --output-dir " + dir.string()));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("logits"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[1, 1000]"), std::string::npos) << r.output;
  return emu::load_npy((dir / "output_0.npy").string()).to_doubles();
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST(ExecResnet18, CpuAndNpuAgree) {
  ASSERT_TRUE(std::filesystem::exists(NPUSCOPE_RESNET18_ONNX)) << "the build generates " << NPUSCOPE_RESNET18_ONNX;
  const auto cpu = run_resnet("--device cpu", "resnet_cpu");
  const auto npu = run_resnet("--device npu", "resnet_npu");  // must_keep_origin_dtype: f32 on the cube
  const auto fp16 = run_resnet("--device npu --precision-mode force_fp16", "resnet_fp16");
  ASSERT_EQ(cpu.size(), 1000u);
  ASSERT_EQ(npu.size(), 1000u);
  double scale = 0;
  for (double v : cpu) scale = std::max(scale, std::fabs(v));
  ASSERT_GT(scale, 0.1) << "logits should not be degenerate";
  // f32 on both: only summation order differs.
  EXPECT_LT(max_abs_diff(cpu, npu), 1e-4 * scale);
  // force_fp16: f16 rounding of every activation; visibly different, still close.
  const double d16 = max_abs_diff(cpu, fp16);
  EXPECT_GT(d16, 1e-4 * scale);
  EXPECT_LT(d16, 0.05 * scale);
}
