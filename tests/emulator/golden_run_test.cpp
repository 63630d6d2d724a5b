// The golden run (Note [Golden run] in emulator/runtime.h): with RuntimeOptions::golden the ops of
// an NPU device are the same tasks as in an NPU run (name, call index, op type, task type, fallback)
// and compute exactly what the cpu device computes, whatever the precision mode or perturbations.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/perturb.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope;
using namespace npuscope::emulator;

namespace {

// The tasks and devices an in-process subscriber sees.
struct Listener {
  std::mutex mutex;
  std::vector<hooks::TaskRecord> tasks;  // kEnd records
  std::vector<hooks::DeviceRecord> devices;
  hooks::SubscriberTable table;

  Listener() {
    table.user = this;
    table.on_task = [](void* u, const hooks::TaskRecord& r) {
      auto* self = static_cast<Listener*>(u);
      std::lock_guard lock(self->mutex);
      if (r.phase == hooks::TaskPhase::kEnd) self->tasks.push_back(r);
    };
    table.on_device = [](void* u, const hooks::DeviceRecord& r) {
      auto* self = static_cast<Listener*>(u);
      std::lock_guard lock(self->mutex);
      self->devices.push_back(r);
    };
  }
};

// What pairs two runs' tasks (Note [Op pairing] in npuscope/analyzer/op_pairing.h) and what they ran as.
using TaskKey = std::tuple<std::string, std::uint32_t, std::string, TaskType, std::uint8_t>;

// Every op's output bytes, in call order.
using Outputs = std::vector<std::vector<std::byte>>;

std::vector<std::byte> bytes_of(const Tensor& t) {
  const Tensor host = t.cpu();
  std::vector<std::byte> out(host.nbytes());
  std::memcpy(out.data(), host.raw_data(), out.size());
  return out;
}

// A few ops whose NPU kernels differ from the golden ones under force_fp16: a cube op, approximated
// activations, a precision-sensitive op, a reduction, an element-wise op, dropout's Bernoulli, and an
// f64 Add that the NPU runs as an AI CPU fallback. Inputs come from the host, so every device sees
// the same values.
Outputs workload(DeviceRef device, DType dtype) {
  const Tensor x = Tensor::randn({8, 64}, dtype, DeviceRef::cpu(), 1).to(device);
  const Tensor w = Tensor::randn({64, 32}, dtype, DeviceRef::cpu(), 2, 0.125f).to(device);
  Outputs out;
  NameScope scope("block");
  const Tensor y = ops::matmul(x, w, {.name = "fc"});
  out.push_back(bytes_of(y));
  out.push_back(bytes_of(ops::gelu(y, {.name = "act"})));
  out.push_back(bytes_of(ops::fast_gelu(y, {.name = "fast_act"})));
  out.push_back(bytes_of(ops::softmax(y, -1, {.name = "softmax"})));
  out.push_back(bytes_of(ops::reduce_sum(y, {1}, true, {.name = "sum"})));
  out.push_back(bytes_of(ops::add(ops::exp(y, {.name = "exp"}), y, {.name = "residual"})));
  out.push_back(bytes_of(call_op1("Bernoulli", {y}, Attrs{{"p", 0.3}, {"seed", std::int64_t{42}}}, {.name = "drop"})));
  const Tensor d = Tensor::randn({16}, DType::kF64, DeviceRef::cpu(), 3).to(device);
  out.push_back(bytes_of(ops::add(d, d, {.name = "f64_add"})));
  return out;
}

// Runs the workload on npu:0 with `options`, listening; returns its outputs and tasks.
std::pair<Outputs, std::vector<TaskKey>> run_npu(const RuntimeOptions& options, DType dtype, Listener& listener) {
  Runtime::configure(options);
  reset_call_counters();
  hooks::subscribe(&listener.table);
  Runtime::get().announce_devices();
  Outputs outputs = workload(DeviceRef::npu(), dtype);
  Runtime::get().synchronize_all();
  hooks::subscribe(nullptr);
  std::vector<TaskKey> keys;
  for (const hooks::TaskRecord& r : listener.tasks) {
    if (!is_kernel_op(static_cast<std::int64_t>(r.task_type))) continue;  // copies are not ops
    keys.emplace_back(r.name, r.call_index, r.op_type, r.task_type, r.fallback);
  }
  return {std::move(outputs), std::move(keys)};
}

class GoldenRun : public ::testing::TestWithParam<DType> {
 protected:
  void TearDown() override {
    hooks::subscribe(nullptr);
    clear_perturbations();
    Runtime::configure({});
  }
};

}  // namespace

TEST_P(GoldenRun, SameTasksAsTheNpuRunWithTheCpuDevicesResults) {
  const DType dtype = GetParam();
  Listener npu_listener, golden_listener;
  const auto [npu_out, npu_tasks] = run_npu({.precision_mode = PrecisionMode::kForceFp16}, dtype, npu_listener);
  // Perturbations never touch a golden run, and force_fp16 is ignored.
  set_perturbations({parse_perturb_rule("*:noise=0.5")});
  const auto [golden_out, golden_tasks] =
      run_npu({.precision_mode = PrecisionMode::kForceFp16, .golden = true}, dtype, golden_listener);
  EXPECT_EQ(perturbation_stats().at(0).ops_matched, 0u);
  clear_perturbations();

  ASSERT_EQ(golden_tasks.size(), 9u);
  EXPECT_EQ(golden_tasks, npu_tasks) << "name, call index, op type, task type, fallback";
  EXPECT_EQ(std::get<0>(golden_tasks.front()), "block/fc");
  EXPECT_EQ(std::get<3>(golden_tasks.front()), TaskType::kAiCore);
  EXPECT_EQ(std::get<3>(golden_tasks.back()), TaskType::kAiCpu) << "the f64 Add falls back in both runs";
  EXPECT_EQ(std::get<4>(golden_tasks.back()), 1);

  reset_call_counters();
  const Outputs cpu_out = workload(DeviceRef::cpu(), dtype);
  ASSERT_EQ(golden_out.size(), cpu_out.size());
  for (std::size_t i = 0; i < cpu_out.size(); ++i) EXPECT_EQ(golden_out[i], cpu_out[i]) << "op " << i << " bitwise";
  // The NPU run itself differs: force_fp16 computes the f32 MatMul in f16 there, not in the golden run.
  if (dtype == DType::kF32) {
    EXPECT_NE(npu_out[0], cpu_out[0]);
  }
  EXPECT_EQ(npu_out[6], cpu_out[6]) << "dropout's mask is the same draw on both backends";

  // The device says it is a golden run's, with the modes it computes in.
  ASSERT_FALSE(golden_listener.devices.empty());
  EXPECT_EQ(golden_listener.devices.back().golden, 1);
  EXPECT_STREQ(golden_listener.devices.back().precision_mode, "golden");
  EXPECT_STREQ(golden_listener.devices.back().overflow_mode, "inf_nan");
  ASSERT_FALSE(npu_listener.devices.empty());
  EXPECT_EQ(npu_listener.devices.back().golden, 0);
  EXPECT_STREQ(npu_listener.devices.back().precision_mode, "force_fp16");
}

INSTANTIATE_TEST_SUITE_P(Storage, GoldenRun, ::testing::Values(DType::kF32, DType::kF16),
                         [](const ::testing::TestParamInfo<DType>& p) { return std::string(dtype_name(p.param)); });

TEST(GoldenRunEnvironment, NpuscopeGoldenIsReadStrictly) {
  setenv("NPUSCOPE_GOLDEN", "1", 1);
  EXPECT_TRUE(RuntimeOptions::from_environment().golden);
  setenv("NPUSCOPE_GOLDEN", "0", 1);
  EXPECT_FALSE(RuntimeOptions::from_environment().golden);
  setenv("NPUSCOPE_GOLDEN", "yes", 1);
  try {
    RuntimeOptions::from_environment();
    ADD_FAILURE() << "NPUSCOPE_GOLDEN=yes accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("NPUSCOPE_GOLDEN='yes': set it to 1"), std::string::npos) << e.what();
  }
  unsetenv("NPUSCOPE_GOLDEN");
  EXPECT_FALSE(RuntimeOptions::from_environment().golden);
}

TEST(PerturbRules, OnePerLineWithTheLineOfABadOne) {
  const auto rules = parse_perturb_rules("a/*:noise=0.5\n\n  \nb:bitflip\r\n");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].str(), "a/*:noise=0.5");
  EXPECT_EQ(rules[1].str(), "b:bitflip");
  try {
    parse_perturb_rules("a:noise\nb:wobble");
    ADD_FAILURE() << "a bad rule accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("NPUSCOPE_PERTURB line 2: perturbation 'b:wobble': unknown mode 'wobble'", 0),
              0u)
        << e.what();
  }
}
