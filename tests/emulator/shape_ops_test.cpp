// Reshape, Transpose: hand-computed results on the CPU, every permutation of a 4-D tensor against an
// index-by-index reference, NPU vs CPU bit-exact (f32, f16, i64, bool), and bad shapes / perms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using npuscope::emulator::ops::Ints;
using namespace npuscope::emulator::testing;

namespace {

class ShapeOpsTest : public OpTest {};

// The tensor's bytes (copied to the host first).
// 0, 1, 2, ... as a tensor of `dtype`; i64 values get a high bit pattern that doubles cannot hold.
Tensor iota(Shape shape, DType dtype) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  std::iota(v.begin(), v.end(), 0);
  if (dtype == DType::kI64) {
    for (auto& e : v) e += (std::int64_t{1} << 60) + 1;
  }
  if (dtype == DType::kBool) {
    for (auto& e : v) e = (e % 3) == 0;
  }
  return Tensor::from_ints(v, std::move(shape), dtype);
}

// Transpose of a row-major `shape` by `perm`, one element at a time.
std::vector<double> reference_transpose(const std::vector<double>& x, const Shape& shape, const Ints& perm) {
  const auto in_strides = [&] {
    std::vector<std::int64_t> s(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
    return s;
  }();
  Shape out_shape(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out_shape[i] = shape[static_cast<std::size_t>(perm[i])];
  std::vector<double> y(x.size());
  std::vector<std::int64_t> index(perm.size(), 0);
  for (std::size_t n = 0; n < y.size(); ++n) {
    std::int64_t src = 0;
    for (std::size_t i = 0; i < perm.size(); ++i) src += index[i] * in_strides[static_cast<std::size_t>(perm[i])];
    y[n] = x[static_cast<std::size_t>(src)];
    for (std::size_t d = perm.size(); d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return y;
}

}  // namespace

TEST_F(ShapeOpsTest, ReshapeInfersMinusOneAndCopiesZeroDims) {
  const Tensor x = iota({2, 3, 4}, DType::kF32);
  const Tensor a = ops::reshape(x, {0, -1});
  EXPECT_EQ(a.shape(), (Shape{2, 12}));
  EXPECT_EQ(to_vec(a), to_vec(x));
  EXPECT_EQ(ops::reshape(x, {4, -1, 3}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(ops::reshape(x, {-1}).shape(), (Shape{24}));
  EXPECT_EQ(ops::reshape(x, {0, 0, 2, 2}).shape(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(ops::reshape(iota({1}, DType::kF32), {}).shape(), (Shape{}));
  EXPECT_EQ(ops::reshape(iota({0, 4}, DType::kF32), {2, 0, -1}).shape(), (Shape{2, 4, 0}));
  // allowzero = 1 (ONNX): a 0 is a zero-size dim, not a copy.
  const Attrs allow_zero{{"shape", Ints{4, 0}}, {"allowzero", std::int64_t{1}}};
  EXPECT_EQ(call_op1("Reshape", {iota({0, 3}, DType::kF32)}, allow_zero).shape(), (Shape{4, 0}));
  EXPECT_THROW(call_op1("Reshape", {iota({2, 3}, DType::kF32)}, allow_zero), InvalidArgument);
}

TEST_F(ShapeOpsTest, ReshapeIsBitExactOnNpuForEveryDtype) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI8, DType::kBool}) {
    const Tensor x =
        t == DType::kF16 || t == DType::kF32 ? Tensor::randn({3, 4, 5}, t, DeviceRef::cpu(), 7) : iota({3, 4, 5}, t);
    const Tensor cpu = ops::reshape(x, {5, -1});
    const Tensor npu = ops::reshape(on_npu({x})[0], {5, -1});
    EXPECT_EQ(npu.shape(), (Shape{5, 12}));
    EXPECT_EQ(bytes_of(npu), bytes_of(x)) << dtype_name(t);
    EXPECT_EQ(bytes_of(cpu), bytes_of(x)) << dtype_name(t);
  }
}

TEST_F(ShapeOpsTest, ReshapeRejectsBadShapes) {
  const Tensor x = iota({2, 3}, DType::kF32);
  EXPECT_THROW(ops::reshape(x, {4, 2}), InvalidArgument);                           // 8 != 6
  EXPECT_THROW(ops::reshape(x, {-1, -1}), InvalidArgument);                         // two -1
  EXPECT_THROW(ops::reshape(x, {4, -1}), InvalidArgument);                          // 6 % 4 != 0
  EXPECT_THROW(ops::reshape(x, {-2, 3}), InvalidArgument);                          // negative dim
  EXPECT_THROW(ops::reshape(x, {0, 0, 0}), InvalidArgument);                        // dim 2 of a 2-D input
  EXPECT_THROW(ops::reshape(iota({0, 3}, DType::kF32), {0, -1}), InvalidArgument);  // -1 over 0 elements
  EXPECT_THROW(call_op1("Reshape", {x}, {}), InvalidArgument);                      // no shape
}

TEST_F(ShapeOpsTest, TransposeHandComputed) {
  const Tensor x = Tensor::from_floats(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, DType::kF32);
  const Tensor y = ops::transpose(x, {1, 0});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  // Empty perm reverses the dims; negative entries count from the end.
  EXPECT_EQ(to_vec(ops::transpose(x, {})), to_vec(y));
  EXPECT_EQ(to_vec(ops::transpose(x, {-1, 0})), to_vec(y));
  // [2, 1, 3] -> [3, 2, 1]: a size-1 dim and a real transpose.
  const Tensor z = ops::transpose(x.view({2, 1, 3}), {2, 0, 1});
  EXPECT_EQ(z.shape(), (Shape{3, 2, 1}));
  EXPECT_EQ(to_vec(z), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST_F(ShapeOpsTest, EveryPermutationMatchesTheReferenceOnBothBackends) {
  const Shape shape{3, 1, 4, 5};
  const Tensor x = iota(shape, DType::kF32);
  Ints perm{0, 1, 2, 3};
  do {
    const auto expected = reference_transpose(to_vec(x), shape, perm);
    EXPECT_EQ(to_vec(ops::transpose(x, perm)), expected) << "cpu perm " << shape_str(perm);
    EXPECT_EQ(to_vec(ops::transpose(on_npu({x})[0], perm)), expected) << "npu perm " << shape_str(perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST_F(ShapeOpsTest, TiledAndRowPathsAreBitExactOnNpu) {
  // Sizes that are not multiples of the 32x32 tile, and perms that keep / move the innermost dim.
  const Shape shape{3, 70, 45};
  for (DType t : {DType::kF32, DType::kF16, DType::kI64, DType::kBool}) {
    const Tensor x =
        t == DType::kF16 || t == DType::kF32 ? Tensor::randn(shape, t, DeviceRef::cpu(), 3) : iota(shape, t);
    for (const Ints& perm : {Ints{0, 2, 1}, Ints{2, 1, 0}, Ints{1, 0, 2}, Ints{1, 2, 0}}) {
      const Tensor cpu = ops::transpose(x, perm);
      const Tensor npu = ops::transpose(on_npu({x})[0], perm);
      EXPECT_EQ(bytes_of(npu), bytes_of(cpu)) << dtype_name(t) << " perm " << shape_str(perm);
      if (t == DType::kF32) {
        EXPECT_EQ(to_vec(cpu), reference_transpose(to_vec(x), shape, perm)) << shape_str(perm);
      }
    }
  }
}

TEST_F(ShapeOpsTest, TransposeRejectsBadPerms) {
  const Tensor x = iota({2, 3, 4}, DType::kF32);
  EXPECT_THROW(ops::transpose(x, {0, 0, 1}), InvalidArgument);  // repeated dim
  EXPECT_THROW(ops::transpose(x, {0, 1, 3}), InvalidArgument);  // out of range
  EXPECT_THROW(ops::transpose(x, {1, 0}), InvalidArgument);     // wrong length
  EXPECT_THROW(ops::transpose(x, {0, 1, -4}), InvalidArgument);
}

TEST_F(ShapeOpsTest, DataMovementCostsOnlyMemoryTraffic) {
  const auto& schema = OpRegistry::instance().schema("Transpose");
  EXPECT_EQ(schema.category, OpCategory::kDataMovement);
  const std::vector<TensorMeta> in{{{4, 8}, DType::kF16}};
  const auto out = schema.infer(in, Attrs{{"perm", Ints{1, 0}}});
  const KernelCost c = schema.cost(in, out, {});
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.bytes, 2.0 * 4 * 8 * 2);
}
