// Note [Perturbation] (emulator/perturb.h): rules parse as documented, each mode changes exactly
// the matched op's outputs as it says, deterministically, on NPU devices only, and the hooks see
// the perturbed outputs.
#include "npuscope/emulator/perturb.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "op_test_util.h"

using namespace npuscope;
using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class Perturb : public ::testing::Test {
 protected:
  void SetUp() override {
    Runtime::configure({});  // ascend910b, must_keep_origin_dtype: f32 stays f32
    clear_perturbations();
  }
  void TearDown() override {
    clear_perturbations();
    hooks::subscribe(nullptr);
  }
};

struct GraphRun {
  Tensor mm, act;  // "mm" = MatMul(a, b), "act" = Relu(mm), on the host
};

// A two-op graph: the rules under test name "mm"; "act" consumes its output.
GraphRun run_graph(DeviceRef device, DType dtype = DType::kF32) {
  const Tensor a = Tensor::randn({16, 32}, dtype, device, 1);
  const Tensor b = Tensor::randn({32, 8}, dtype, device, 2);
  const Tensor mm = ops::matmul(a, b, {.name = "mm"});
  const Tensor act = ops::relu(mm, {.name = "act"});
  return {mm.cpu(), act.cpu()};
}

std::vector<std::uint32_t> f32_bits(const Tensor& t) {
  const auto bytes = bytes_of(t);
  std::vector<std::uint32_t> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

std::vector<float> floats_of(const Tensor& t) {
  std::vector<float> out;
  for (double d : t.to_doubles()) out.push_back(static_cast<float>(d));
  return out;
}

// Relu of the perturbed MatMul, computed here: "act" must be exactly that (its own computation is
// untouched; only its input changed).
void expect_relu_of(const GraphRun& r) {
  const auto mm = floats_of(r.mm), act = floats_of(r.act);
  ASSERT_EQ(mm.size(), act.size());
  for (std::size_t i = 0; i < mm.size(); ++i) {
    if (std::isnan(mm[i])) {
      EXPECT_TRUE(std::isnan(act[i])) << i;
    } else {
      EXPECT_EQ(act[i], std::max(mm[i], 0.0f)) << i;
    }
  }
}

void expect_stats(std::uint64_t ops, std::uint64_t outputs) {
  const auto stats = perturbation_stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].ops_matched, ops);
  EXPECT_EQ(stats[0].outputs_perturbed, outputs);
}

void expect_bad_spec(const std::string& spec, const std::string& says) {
  try {
    parse_perturb_rule(spec);
    ADD_FAILURE() << "'" << spec << "' parsed";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + spec + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(says), std::string::npos) << msg;
    EXPECT_NE(msg.find("noise[=REL], bitflip[=BIT] or f16"), std::string::npos) << msg;
  }
}

}  // namespace

TEST(PerturbRuleParse, ReadsEveryModeAndPrintsItBack) {
  PerturbRule r = parse_perturb_rule("block4.matmul:noise=0.05");
  EXPECT_EQ(r.glob, "block4.matmul");
  EXPECT_EQ(r.mode, PerturbMode::kNoise);
  EXPECT_EQ(r.rel, 0.05);
  EXPECT_EQ(r.str(), "block4.matmul:noise=0.05");
  EXPECT_EQ(parse_perturb_rule("x:noise").rel, kDefaultNoiseRel);
  EXPECT_EQ(parse_perturb_rule("x:noise").str(), "x:noise=0.01");

  r = parse_perturb_rule("*/MatMul:bitflip");
  EXPECT_EQ(r.mode, PerturbMode::kBitFlip);
  EXPECT_EQ(r.bit, kDefaultFlipBit);
  EXPECT_EQ(r.str(), "*/MatMul:bitflip");
  EXPECT_EQ(parse_perturb_rule("x:bitflip=3").bit, 3);
  EXPECT_EQ(parse_perturb_rule("x:bitflip=3").str(), "x:bitflip=3");

  r = parse_perturb_rule("model/dense:0:f16");  // split at the last ':'
  EXPECT_EQ(r.glob, "model/dense:0");
  EXPECT_EQ(r.mode, PerturbMode::kF16);
  EXPECT_EQ(r.str(), "model/dense:0:f16");
}

TEST(PerturbRuleParse, BadSpecsSayWhatIsWrong) {
  expect_bad_spec("block4.matmul", "no ':'");
  expect_bad_spec(":noise", "the glob is empty");
  expect_bad_spec("x:", "no mode after ':'");
  expect_bad_spec("x:jitter", "unknown mode 'jitter'");
  expect_bad_spec("x:noise=", "positive relative amplitude");
  expect_bad_spec("x:noise=abc", "positive relative amplitude");
  expect_bad_spec("x:noise=0.1x", "positive relative amplitude");
  expect_bad_spec("x:noise=0", "positive relative amplitude");
  expect_bad_spec("x:noise=-0.1", "positive relative amplitude");
  expect_bad_spec("x:noise=inf", "positive relative amplitude");
  expect_bad_spec("x:bitflip=64", "bit number 0..63");
  expect_bad_spec("x:bitflip=-1", "bit number 0..63");
  expect_bad_spec("x:bitflip=1.5", "bit number 0..63");
  expect_bad_spec("x:f16=1", "f16 takes no value");
  EXPECT_THROW(set_perturbations({PerturbRule{}}), InvalidArgument);  // empty glob
}

TEST(PerturbRuleParse, GlobsFollowFnmatch) {
  const auto layer3 = parse_perturb_rule("layer3.*:f16");
  EXPECT_TRUE(layer3.matches("layer3.matmul"));
  EXPECT_TRUE(layer3.matches("layer3.attn/MatMul"));  // '*' crosses '/'
  EXPECT_FALSE(layer3.matches("layer30"));
  EXPECT_FALSE(layer3.matches("xlayer3.matmul"));
  const auto matmuls = parse_perturb_rule("*/MatMul:f16");
  EXPECT_TRUE(matmuls.matches("a/b/MatMul"));
  EXPECT_FALSE(matmuls.matches("MatMul"));
  EXPECT_TRUE(parse_perturb_rule("block[0-3].add:f16").matches("block2.add"));
}

TEST_F(Perturb, NoiseStaysWithinRelAndTouchesOnlyTheMatchedOp) {
  const GraphRun clean = run_graph(DeviceRef::npu());
  set_perturbations({parse_perturb_rule("mm:noise=0.05")});
  const GraphRun noisy = run_graph(DeviceRef::npu());
  expect_stats(1, 1);

  const auto y0 = floats_of(clean.mm), y1 = floats_of(noisy.mm);
  ASSERT_EQ(y0.size(), y1.size());
  int changed = 0;
  double max_rel = 0;
  for (std::size_t i = 0; i < y0.size(); ++i) {
    const double err = std::fabs(static_cast<double>(y1[i]) - y0[i]);
    EXPECT_LE(err, 0.05 * std::fabs(y0[i]) * (1 + 1e-6)) << i;
    if (y0[i] != 0) max_rel = std::max(max_rel, err / std::fabs(y0[i]));
    changed += y1[i] != y0[i];
  }
  EXPECT_GT(changed, static_cast<int>(y0.size()) * 9 / 10);
  EXPECT_GT(max_rel, 0.04);  // uses the whole amplitude
  expect_relu_of(noisy);
  EXPECT_NE(bytes_of(noisy.act), bytes_of(clean.act));
}

TEST_F(Perturb, BitflipChangesExactlyOneBitOfElementZero) {
  const GraphRun clean = run_graph(DeviceRef::npu());
  for (const auto& [spec, bit] : std::vector<std::pair<std::string, int>>{{"mm:bitflip", 30}, {"mm:bitflip=3", 3}}) {
    set_perturbations({parse_perturb_rule(spec)});
    const GraphRun flipped = run_graph(DeviceRef::npu());
    expect_stats(1, 1);
    const auto b0 = f32_bits(clean.mm), b1 = f32_bits(flipped.mm);
    ASSERT_EQ(b0.size(), b1.size());
    EXPECT_EQ(b1[0], b0[0] ^ (1u << bit)) << spec;
    for (std::size_t i = 1; i < b0.size(); ++i) EXPECT_EQ(b1[i], b0[i]) << spec << " element " << i;
    expect_relu_of(flipped);
  }
}

TEST_F(Perturb, DefaultBitflipOfA16BitOutputIsItsExponentTopBit) {
  const GraphRun clean = run_graph(DeviceRef::npu(), DType::kF16);
  set_perturbations({parse_perturb_rule("mm:bitflip")});
  const GraphRun flipped = run_graph(DeviceRef::npu(), DType::kF16);
  const auto b0 = bytes_of(clean.mm), b1 = bytes_of(flipped.mm);
  ASSERT_EQ(b0.size(), b1.size());
  std::uint16_t h0, h1;
  std::memcpy(&h0, b0.data(), 2);
  std::memcpy(&h1, b1.data(), 2);
  EXPECT_EQ(h1, h0 ^ (1u << 14));
  EXPECT_TRUE(std::equal(b0.begin() + 2, b0.end(), b1.begin() + 2));
  // A bit beyond the dtype's width leaves the output alone, and the stats say so.
  set_perturbations({parse_perturb_rule("mm:bitflip=20")});
  EXPECT_EQ(bytes_of(run_graph(DeviceRef::npu(), DType::kF16).mm), b0);
  expect_stats(1, 0);
}

TEST_F(Perturb, F16RoundsEachElementThroughHalf) {
  const GraphRun clean = run_graph(DeviceRef::npu());
  set_perturbations({parse_perturb_rule("m?:f16")});
  const GraphRun rounded = run_graph(DeviceRef::npu());
  expect_stats(1, 1);
  const auto y0 = floats_of(clean.mm), y1 = floats_of(rounded.mm);
  int changed = 0;
  for (std::size_t i = 0; i < y0.size(); ++i) {
    EXPECT_EQ(y1[i], round_to_half(y0[i])) << i;
    changed += y1[i] != y0[i];
  }
  EXPECT_GT(changed, 0);
  expect_relu_of(rounded);
}

TEST_F(Perturb, F16LeavesF16OutputsAloneAndSaysSo) {
  const GraphRun clean = run_graph(DeviceRef::npu(), DType::kF16);
  set_perturbations({parse_perturb_rule("mm:f16")});
  EXPECT_EQ(bytes_of(run_graph(DeviceRef::npu(), DType::kF16).mm), bytes_of(clean.mm));
  expect_stats(1, 0);
}

TEST_F(Perturb, RulesApplyInOrder) {
  set_perturbations({parse_perturb_rule("mm:noise=0.05")});
  const auto noisy = floats_of(run_graph(DeviceRef::npu()).mm);
  set_perturbations({parse_perturb_rule("mm:noise=0.05"), parse_perturb_rule("*:f16")});
  const GraphRun both = run_graph(DeviceRef::npu());
  const auto y = floats_of(both.mm);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], round_to_half(noisy[i])) << i;
  const auto stats = perturbation_stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].ops_matched, 1u);
  EXPECT_EQ(stats[1].ops_matched, 2u);  // mm and act (inputs are uploads, not ops)
}

TEST_F(Perturb, SameRulesSameBits) {
  set_perturbations({parse_perturb_rule("mm:noise=0.05")});
  const GraphRun first = run_graph(DeviceRef::npu());
  Runtime::configure({});  // a fresh device and fresh call counters change nothing
  set_perturbations({parse_perturb_rule("mm:noise=0.05")});
  const GraphRun second = run_graph(DeviceRef::npu());
  EXPECT_EQ(bytes_of(first.mm), bytes_of(second.mm));
  EXPECT_EQ(bytes_of(first.act), bytes_of(second.act));
  // The noise depends on the op's name: another name, other noise.
  const Tensor a = Tensor::randn({16, 32}, DType::kF32, DeviceRef::npu(), 1);
  const Tensor b = Tensor::randn({32, 8}, DType::kF32, DeviceRef::npu(), 2);
  set_perturbations({parse_perturb_rule("mm*:noise=0.05")});
  EXPECT_NE(bytes_of(ops::matmul(a, b, {.name = "mm2"})), bytes_of(first.mm));
}

TEST_F(Perturb, ClearingRestoresTheCleanResult) {
  const GraphRun clean = run_graph(DeviceRef::npu());
  set_perturbations({parse_perturb_rule("*:noise=0.5")});
  run_graph(DeviceRef::npu());
  clear_perturbations();
  const GraphRun again = run_graph(DeviceRef::npu());
  EXPECT_EQ(bytes_of(again.mm), bytes_of(clean.mm));
  EXPECT_TRUE(perturbation_stats().empty());
}

TEST_F(Perturb, CpuGoldenIsNeverPerturbed) {
  const GraphRun clean = run_graph(DeviceRef::cpu());
  set_perturbations({parse_perturb_rule("*:noise=0.5"), parse_perturb_rule("*:bitflip")});
  const GraphRun again = run_graph(DeviceRef::cpu());
  EXPECT_EQ(bytes_of(again.mm), bytes_of(clean.mm));
  EXPECT_EQ(bytes_of(again.act), bytes_of(clean.act));
  for (const auto& s : perturbation_stats()) EXPECT_EQ(s.ops_matched, 0u);
}

TEST_F(Perturb, IntegerOutputsAreLeftAlone) {
  const Tensor x = Tensor::from_ints(std::vector<std::int64_t>{1, 2, 3, 4}, {4}, DType::kI32, DeviceRef::npu());
  const auto clean = bytes_of(ops::add(x, x, {.name = "iadd"}));
  set_perturbations({parse_perturb_rule("iadd:bitflip=0")});
  EXPECT_EQ(bytes_of(ops::add(x, x, {.name = "iadd"})), clean);
  expect_stats(1, 0);
}

namespace {

// Copies the output data of the op named "mm" as the tensor hook delivers it (between the task's
// begin and end records), and its task's overflow flag.
struct OutputTap {
  std::mutex mutex;
  std::vector<float> mm_output;
  std::uint64_t mm_task = 0;
  bool mm_overflow = false;
  hooks::SubscriberTable table;

  OutputTap() {
    table.user = this;
    table.wants_tensors = true;
    table.on_task = [](void* u, const hooks::TaskRecord& r) {
      auto* self = static_cast<OutputTap*>(u);
      std::lock_guard lock(self->mutex);
      if (r.name == nullptr || std::string(r.name) != "mm") return;
      if (r.phase == hooks::TaskPhase::kBegin) self->mm_task = r.task_id;
      if (r.phase == hooks::TaskPhase::kEnd) self->mm_overflow = r.overflow != 0;
    };
    table.on_tensor = [](void* u, const hooks::TensorRecord& r) {
      auto* self = static_cast<OutputTap*>(u);
      std::lock_guard lock(self->mutex);
      if (r.task_id != self->mm_task || r.role != npuscope::TensorRole::kOutput) return;
      self->mm_output.assign(static_cast<const float*>(static_cast<const void*>(r.data)),
                             static_cast<const float*>(static_cast<const void*>(r.data)) + r.bytes / 4);
    };
  }
};

}  // namespace

TEST_F(Perturb, HooksSeeThePerturbedOutputAndItsOverflow) {
  // Element 0 of mm is 1.5: flipping the exponent's top bit makes it NaN (an all-ones exponent).
  const Tensor a = Tensor::from_floats(std::vector<float>{1.5f, 0.0f}, {1, 2}, DType::kF32, DeviceRef::npu());
  const Tensor b =
      Tensor::from_floats(std::vector<float>{1.0f, 2.0f, 0.0f, 0.0f}, {2, 2}, DType::kF32, DeviceRef::npu());
  OutputTap tap;
  hooks::subscribe(&tap.table);
  set_perturbations({parse_perturb_rule("mm:bitflip")});
  const Tensor y = ops::matmul(a, b, {.name = "mm"}).cpu();
  hooks::subscribe(nullptr);
  const auto host = floats_of(y);
  ASSERT_EQ(host.size(), 2u);
  EXPECT_TRUE(std::isnan(host[0]));
  EXPECT_EQ(host[1], 3.0f);
  std::lock_guard lock(tap.mutex);
  EXPECT_NE(tap.mm_task, 0u);
  EXPECT_TRUE(tap.mm_overflow);
  ASSERT_EQ(tap.mm_output.size(), 2u);  // the dump sees the NaN
  EXPECT_TRUE(std::isnan(tap.mm_output[0]));
}
