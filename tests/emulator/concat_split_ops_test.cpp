// Concat, Split: hand-computed results on the CPU, negative axes, zero-size parts, a split/concat
// round trip, NPU vs CPU bit-exact (f32, f16, i64, bool), and bad shapes / sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using npuscope::emulator::ops::Ints;
using namespace npuscope::emulator::testing;

namespace {

class ConcatSplitOpsTest : public OpTest {};

// `first`, first + 1, ... in `dtype`; i64 values above 2^53 so that a trip through double would show.
Tensor counting(Shape shape, DType dtype, std::int64_t first = 0) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  std::iota(v.begin(), v.end(), first);
  if (dtype == DType::kI64) {
    for (auto& e : v) e += (std::int64_t{1} << 58) + 1;
  }
  if (dtype == DType::kBool) {
    for (auto& e : v) e &= 1;
  }
  return Tensor::from_ints(v, std::move(shape), dtype);
}

Tensor sample(Shape shape, DType dtype, std::uint64_t seed) {
  if (dtype == DType::kF32 || dtype == DType::kF16)
    return Tensor::randn(std::move(shape), dtype, DeviceRef::cpu(), seed);
  return counting(std::move(shape), dtype, static_cast<std::int64_t>(seed) * 100);
}

}  // namespace

TEST_F(ConcatSplitOpsTest, ConcatHandComputed) {
  const Tensor a = floats({1, 2, 3, 4}, {2, 2}), b = floats({5, 6}, {2, 1});
  const Tensor y = ops::concat({a, b}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vec(y), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(to_vec(ops::concat({a, b}, -1)), to_vec(y));
  const Tensor c = floats({7, 8}, {1, 2});
  const Tensor z = ops::concat({a, c, a}, 0);
  EXPECT_EQ(z.shape(), (Shape{5, 2}));
  EXPECT_EQ(to_vec(z), (std::vector<double>{1, 2, 3, 4, 7, 8, 1, 2, 3, 4}));
  // A zero-size part contributes nothing; a single input is a copy.
  EXPECT_EQ(to_vec(ops::concat({a, Tensor::zeros({2, 0}, DType::kF32), b}, 1)), to_vec(y));
  EXPECT_EQ(to_vec(ops::concat({a}, 0)), to_vec(a));
}

TEST_F(ConcatSplitOpsTest, ConcatIsBitExactOnNpu) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI64, DType::kBool}) {
    const std::vector<Tensor> xs{sample({2, 3, 4}, t, 1), sample({2, 5, 4}, t, 2), sample({2, 1, 4}, t, 3)};
    for (std::int64_t axis : {1, -2}) {
      const Tensor cpu = ops::concat(xs, axis);
      const Tensor npu = ops::concat(on_npu(xs), axis);
      EXPECT_EQ(npu.shape(), (Shape{2, 9, 4}));
      EXPECT_EQ(bytes_of(npu), bytes_of(cpu)) << dtype_name(t);
    }
    // The first rows of the result are the first input's first rows.
    const auto all = bytes_of(ops::concat(xs, 1)), first = bytes_of(xs[0]);
    const std::size_t row = 3 * 4 * dtype_size(t);
    EXPECT_TRUE(std::equal(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(row), all.begin()));
  }
}

TEST_F(ConcatSplitOpsTest, ConcatRejectsMismatchedInputs) {
  const Tensor a = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(ops::concat({a, floats({1, 2, 3}, {3, 1})}, 1), InvalidArgument);      // dim 0 differs
  EXPECT_THROW(ops::concat({a, floats({1, 2}, {2})}, 0), InvalidArgument);            // rank differs
  EXPECT_THROW(ops::concat({a, counting({2, 2}, DType::kI32)}, 0), InvalidArgument);  // dtype differs
  EXPECT_THROW(ops::concat({a, a}, 2), InvalidArgument);
  EXPECT_THROW(ops::concat({a, a}, -3), InvalidArgument);
  EXPECT_THROW(ops::concat({floats({1}, {}), floats({2}, {})}, 0), InvalidArgument);
  EXPECT_THROW(ops::concat({}, 0), InvalidArgument);
}

TEST_F(ConcatSplitOpsTest, SplitHandComputed) {
  const Tensor x = floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 5});
  const auto parts = ops::split(x, {2, 3}, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vec(parts[0]), (std::vector<double>{0, 1, 5, 6}));
  EXPECT_EQ(to_vec(parts[1]), (std::vector<double>{2, 3, 4, 7, 8, 9}));
  const auto rows = ops::split(x, {1, 0, 1}, -2);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].shape(), (Shape{0, 5}));
  EXPECT_EQ(to_vec(rows[2]), (std::vector<double>{5, 6, 7, 8, 9}));
}

TEST_F(ConcatSplitOpsTest, SplitNumOutputsGivesCeilSizedParts) {
  // ONNX opset 18 without 'split': ceil(5 / 2) = 3, then the rest.
  const Tensor x = floats({0, 1, 2, 3, 4}, {5});
  const auto parts = call_op("Split", {x}, Attrs{{"axis", std::int64_t{0}}, {"num_outputs", std::int64_t{2}}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(to_vec(parts[0]), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(to_vec(parts[1]), (std::vector<double>{3, 4}));
}

TEST_F(ConcatSplitOpsTest, SplitIsBitExactOnNpuAndRoundTripsThroughConcat) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI64, DType::kBool}) {
    const Tensor x = sample({3, 7, 5}, t, 4);
    const Ints sizes{2, 4, 1};
    const auto cpu = ops::split(x, sizes, 1);
    const auto npu = ops::split(on_npu({x})[0], sizes, 1);
    ASSERT_EQ(npu.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(bytes_of(npu[k]), bytes_of(cpu[k])) << dtype_name(t) << " part " << k;
    EXPECT_EQ(bytes_of(ops::concat(npu, 1)), bytes_of(x)) << dtype_name(t);
  }
}

TEST_F(ConcatSplitOpsTest, SplitRejectsBadSizes) {
  const Tensor x = floats({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_THROW(ops::split(x, {1, 1}, 1), InvalidArgument);   // sums to 2, not 3
  EXPECT_THROW(ops::split(x, {4, -1}, 1), InvalidArgument);  // negative size
  EXPECT_THROW(ops::split(x, {1, 1}, 2), InvalidArgument);   // axis out of range
  EXPECT_THROW(ops::split(x, {}, 0), InvalidArgument);
  EXPECT_THROW(call_op("Split", {x}, Attrs{{"axis", std::int64_t{0}}}), InvalidArgument);  // no sizes
  EXPECT_THROW(ops::split(floats({1}, {}), {1}, 0), InvalidArgument);
}

// num_outputs comes from the model: 2^40 parts used to be built one by one; more parts than
// elements is now an error naming the value and the range.
TEST_F(ConcatSplitOpsTest, SplitNumOutputsBeyondTheDimIsAnError) {
  const Tensor x = floats({0, 1, 2, 3, 4}, {5});
  for (std::int64_t n : {std::int64_t{6}, std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max()}) {
    try {
      call_op("Split", {x}, Attrs{{"axis", std::int64_t{0}}, {"num_outputs", n}});
      ADD_FAILURE() << "no error for " << n;
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("num_outputs " + std::to_string(n) + " is outside [1, 5]"), std::string::npos) << what;
    }
  }
  // Split sizes that wrap around to the dim are refused too.
  const std::int64_t p62 = std::int64_t{1} << 62;
  EXPECT_THROW(ops::split(x, {p62, p62, p62, p62, 5}, 0), InvalidArgument);
}
