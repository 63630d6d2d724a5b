// The tensors' signatures a listener sees on each task (Note [Signature cache] in
// emulator/src/launch_names.cpp): a thread keeps the ones it met, and every task must still carry
// its own, whatever the thread described before it.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "task_end_records.h"

namespace npuscope::emulator {
namespace {

struct Signatures {
  std::string op_type, inputs, outputs;
  bool operator==(const Signatures&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Signatures& s) {
  return os << s.op_type << " in=" << s.inputs << " out=" << s.outputs;
}

std::vector<Signatures> seen(testing::EndRecords& records) {
  Runtime::get().synchronize_all();
  std::lock_guard lock(records.mutex);
  std::vector<Signatures> out;
  for (const hooks::TaskRecord& r : records.ends) {
    out.push_back({r.op_type, r.input_signature ? r.input_signature : "<none>",
                   r.output_signature ? r.output_signature : "<none>"});
  }
  return out;
}

// Adds and convolutions of shapes, dtypes and optional inputs that change from op to op, some
// repeated after others (a hit among the last two, a hit further back, and new ones).
std::vector<Signatures> launch_mixed_ops() {
  const DeviceRef npu = DeviceRef::npu();
  const Tensor a16 = Tensor::zeros({16}, DType::kF16, npu), a44 = Tensor::zeros({4, 4}, DType::kF16, npu);
  const Tensor one = Tensor::zeros({1}, DType::kF16, npu), f32x = Tensor::zeros({16}, DType::kF32, npu);
  const Tensor x = Tensor::zeros({1, 2, 4, 4}, DType::kF32, npu), w = Tensor::zeros({3, 2, 3, 3}, DType::kF32, npu);
  const Tensor b = Tensor::zeros({3}, DType::kF32, npu);
  Runtime::get().synchronize_all();
  testing::EndRecords records;
  ops::add(a16, one);
  ops::add(a44, one);
  ops::add(a16, one);
  ops::add(f32x, f32x);
  ops::add(a44, a44);
  ops::conv2d(x, w, b);
  ops::conv2d(x, w, Tensor());
  ops::add(a16, one);
  ops::conv2d(x, w, b);
  return seen(records);
}

const std::vector<Signatures> kExpected = {
    {"Add", "16;1|f16;f16|FORMAT_ND;FORMAT_ND", "16|f16|FORMAT_ND"},
    {"Add", "4,4;1|f16;f16|FORMAT_ND;FORMAT_ND", "4,4|f16|FORMAT_ND"},
    {"Add", "16;1|f16;f16|FORMAT_ND;FORMAT_ND", "16|f16|FORMAT_ND"},
    {"Add", "16;16|f32;f32|FORMAT_ND;FORMAT_ND", "16|f32|FORMAT_ND"},
    {"Add", "4,4;4,4|f16;f16|FORMAT_ND;FORMAT_ND", "4,4|f16|FORMAT_ND"},
    {"Conv2d", "1,2,4,4;3,2,3,3;3|f32;f32;f32|NCHW;NCHW;FORMAT_ND", "1,3,2,2|f32|NCHW"},
    {"Conv2d", "1,2,4,4;3,2,3,3;|f32;f32;|NCHW;NCHW;", "1,3,2,2|f32|NCHW"},
    {"Add", "16;1|f16;f16|FORMAT_ND;FORMAT_ND", "16|f16|FORMAT_ND"},
    {"Conv2d", "1,2,4,4;3,2,3,3;3|f32;f32;f32|NCHW;NCHW;FORMAT_ND", "1,3,2,2|f32|NCHW"},
};

TEST(SignatureCache, EachTaskCarriesItsOwnTensorsWhateverCameBefore) {
  Runtime::configure({.spec = "tiny"});
  EXPECT_EQ(launch_mixed_ops(), kExpected);
  // Again: now every signature comes from this thread's cache.
  EXPECT_EQ(launch_mixed_ops(), kExpected);
}

TEST(SignatureCache, AnotherThreadSpellsTheSameSignatures) {
  Runtime::configure({.spec = "tiny"});
  EXPECT_EQ(launch_mixed_ops(), kExpected);
  std::vector<Signatures> other;
  std::thread([&] { other = launch_mixed_ops(); }).join();
  EXPECT_EQ(other, kExpected);
}

}  // namespace
}  // namespace npuscope::emulator
