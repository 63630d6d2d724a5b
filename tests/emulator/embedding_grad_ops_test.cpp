// EmbeddingDenseGrad: values from PyTorch 1.13's CPU embedding_dense_backward (padding_idx,
// scale_grad_by_freq, int32 indices), NPU vs CPU in f32/f16 with repeated indices, faults for
// indices out of range and bad shapes.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class EmbeddingGradTest : public OpTest {};

// dy = arange(12).reshape(2, 3, 2) * 0.5 - 1, indices [[1, 3, 1], [0, 1, 3]], num_weights 5.
Tensor dy() {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i) * 0.5f - 1;
  return floats(v, {2, 3, 2});
}

}  // namespace

TEST_F(EmbeddingGradTest, MatchesPyTorch) {
  for (DType it : {DType::kI64, DType::kI32}) {
    const Tensor idx = ints({1, 3, 1, 0, 1, 3}, {2, 3}, it);
    const BothBackends r = run_both("EmbeddingDenseGrad", {dy(), idx}, {{"num_weights", std::int64_t{5}}});
    EXPECT_EQ(r.cpu[0].shape(), (Shape{5, 2}));
    EXPECT_EQ(to_vec(r.cpu[0]), (Doubles{2, 2.5, 3, 4.5, 0, 0, 4, 5, 0, 0}));
    EXPECT_EQ(to_vec(r.npu[0]), (Doubles{2, 2.5, 3, 4.5, 0, 0, 4, 5, 0, 0}));
    const Attrs pad{
        {"num_weights", std::int64_t{5}}, {"padding_idx", std::int64_t{3}}, {"scale_grad_by_freq", std::int64_t{1}}};
    const BothBackends p = run_both("EmbeddingDenseGrad", {dy(), idx}, pad);
    EXPECT_EQ(to_vec(p.cpu[0]), (Doubles{2, 2.5, 1, 1.5, 0, 0, 0, 0, 0, 0}));
    EXPECT_EQ(to_vec(p.npu[0]), (Doubles{2, 2.5, 1, 1.5, 0, 0, 0, 0, 0, 0}));
  }
}

TEST_F(EmbeddingGradTest, NpuMatchesCpuWithManyRepeats) {
  I64s idx(4 * 64);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int64_t>((i * 7) % 11);
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor g = Tensor::randn({4, 64, 48}, dt, DeviceRef::cpu(), 1);
    const Tolerance tol = default_tolerance(dt);
    EXPECT_TRUE(npu_close_to_cpu("EmbeddingDenseGrad", {g, ints(idx, {4, 64})}, {{"num_weights", std::int64_t{13}}},
                                 tol.rtol * 4, tol.atol * 4))
        << dtype_name(dt);
  }
}

TEST_F(EmbeddingGradTest, IndexOutOfRangeIsAKernelFault) {
  const Attrs a{{"num_weights", std::int64_t{5}}};
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("EmbeddingDenseGrad", {dy(), ints({1, 5, 1, 0, 1, 3}, {2, 3})}, a);
                       }),
                       {"EmbeddingDenseGrad", "index 5", "num_weights 5"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("EmbeddingDenseGrad", on_npu({dy(), ints({1, -1, 1, 0, 1, 3}, {2, 3})}), a).cpu();
                       }),
                       {"EmbeddingDenseGrad", "index -1"}));
}

TEST_F(EmbeddingGradTest, BadShapesNameTheInput) {
  const Tensor idx = ints({1, 3, 1, 0, 1, 3}, {2, 3});
  const Attrs a{{"num_weights", std::int64_t{5}}};
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("EmbeddingDenseGrad", {dy().view({3, 2, 2}), idx}, a);
                       }),
                       {"EmbeddingDenseGrad", "dy [3, 2, 2]", "[2, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("EmbeddingDenseGrad", {dy(), idx.to(DeviceRef::cpu())});
                       }),
                       {"EmbeddingDenseGrad", "num_weights"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("EmbeddingDenseGrad", {dy(), floats({1, 3, 1, 0, 1, 3}, {2, 3})}, a);
                       }),
                       {"EmbeddingDenseGrad", "indices", "i32 or i64"}));
}
