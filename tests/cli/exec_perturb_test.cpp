// `npuscope exec --perturb` on the deep MLP sample model, called as a user would: unperturbed the
// NPU agrees with the CPU golden, a perturbed op deep in the model moves the outputs, and a rule
// that perturbs nothing is a warning.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "npuscope/emulator/npy.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
namespace emu = npuscope::emulator;

namespace {

struct ExecRun {
  CommandResult result;
  std::vector<double> logits;
};

ExecRun exec_mlp(const std::string& flags, const std::string& name) {
  const auto dir = temp_dir(name);
  ExecRun run;
  run.result = run_command(npuscope_cmd(std::string("exec --model ") + NPUSCOPE_MLP_ONNX + " --seed 5 " + flags +
                                        " --output-dir " + dir.string()));
  EXPECT_EQ(run.result.status, 0) << run.result.output;
  if (run.result.status == 0) run.logits = emu::load_npy((dir / "output_0.npy").string()).to_doubles();
  return run;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return ab / std::sqrt(aa * bb);
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST(ExecPerturb, UnperturbedNpuMatchesTheCpuGolden) {
  ASSERT_TRUE(std::filesystem::exists(NPUSCOPE_MLP_ONNX)) << "the build generates " << NPUSCOPE_MLP_ONNX;
  const auto cpu = exec_mlp("--device cpu", "mlp_cpu");
  const auto npu = exec_mlp("--device npu --precision-mode must_keep_origin_dtype", "mlp_npu");
  ASSERT_EQ(cpu.logits.size(), 8u * 16u);
  ASSERT_EQ(npu.logits.size(), cpu.logits.size());
  EXPECT_TRUE(has(cpu.result.output, "[8, 16]")) << cpu.result.output;
  EXPECT_GT(cosine(npu.logits, cpu.logits), 0.99999);
  EXPECT_LT(max_abs_diff(npu.logits, cpu.logits), 1e-4);
  EXPECT_FALSE(has(npu.result.output, "  perturb ")) << npu.result.output;
}

TEST(ExecPerturb, APerturbedOpDeepInTheModelMovesTheOutputs) {
  const auto clean = exec_mlp("--device npu", "mlp_clean");
  const auto noisy = exec_mlp("--device npu --perturb 'block4.matmul:noise=0.05'", "mlp_noisy");
  ASSERT_EQ(noisy.logits.size(), clean.logits.size());
  EXPECT_GT(max_abs_diff(noisy.logits, clean.logits), 1e-3);
  EXPECT_TRUE(has(noisy.result.output, "perturb block4.matmul:noise=0.05: 1 op matched, 1 output perturbed"))
      << noisy.result.output;
  EXPECT_FALSE(has(noisy.result.output, "warning")) << noisy.result.output;
  // Deterministic: the same command gives the same bits.
  EXPECT_EQ(exec_mlp("--device npu --perturb 'block4.matmul:noise=0.05'", "mlp_noisy2").logits, noisy.logits);

  // Several rules; globs over names; every mode runs end to end.
  const auto many = exec_mlp("--device npu --perturb 'block[67].*:f16' --perturb 'head.matmul:bitflip=20'", "mlp_many");
  EXPECT_TRUE(has(many.result.output, "perturb block[67].*:f16: 10 ops matched, 10 outputs perturbed"))
      << many.result.output;
  EXPECT_NE(many.logits, clean.logits);
}

TEST(ExecPerturb, ARuleThatPerturbsNothingIsAWarning) {
  const auto clean = exec_mlp("--device npu", "mlp_clean_w");
  const auto r = exec_mlp(
      "--device npu --perturb 'block4.matmul:noise=0.05' --perturb 'block9.*:f16' "
      "--perturb 'nosuch:bitflip'",
      "mlp_unmatched");
  EXPECT_TRUE(has(r.result.output, "warning: --perturb matched no op for 'block9.*:f16', 'nosuch:bitflip'"))
      << r.result.output;
  EXPECT_NE(r.logits, clean.logits);  // the rule that matched still applies

  // The cpu golden backend is never perturbed, and says so.
  const auto cpu = exec_mlp("--device cpu", "mlp_cpu_w");
  const auto cpu_perturbed = exec_mlp("--device cpu --perturb 'block4.matmul:noise=0.05'", "mlp_cpu_p");
  EXPECT_EQ(cpu_perturbed.logits, cpu.logits);
  EXPECT_TRUE(has(cpu_perturbed.result.output, "warning: --perturb changes NPU kernels only"))
      << cpu_perturbed.result.output;
}

TEST(ExecPerturb, ABadRuleIsAUsageError) {
  const auto r =
      run_command(npuscope_cmd(std::string("exec --model ") + NPUSCOPE_MLP_ONNX +
                               " --perturb 'block4.matmul:jitter=2' --output-dir " + temp_dir("mlp_bad").string()));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "unknown mode 'jitter'")) << r.output;
  EXPECT_TRUE(has(r.output, "noise[=REL], bitflip[=BIT] or f16")) << r.output;
}
