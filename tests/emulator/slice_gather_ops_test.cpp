// Slice, Gather: ONNX semantics on the CPU against hand-computed values (negative indices, clamping,
// INT64 extremes, negative steps, axes), NPU vs CPU bit-exact (f32, f16, i64), out-of-range gather
// indices (an error naming the index and the valid range, on the CPU at once and on the NPU at the
// next synchronisation; valid negative indices wrap), and bad attributes.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using npuscope::emulator::ops::Ints;
using namespace npuscope::emulator::testing;

namespace {

class SliceGatherOpsTest : public OpTest {};

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

Tensor range(Shape shape, DType dtype = DType::kF32) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  std::iota(v.begin(), v.end(), 0);
  return Tensor::from_ints(v, std::move(shape), dtype);
}

Tensor indices(std::vector<std::int64_t> v, Shape shape, DType dtype = DType::kI64) {
  return Tensor::from_ints(v, std::move(shape), dtype);
}

// Slice of 0..9 along its only axis.
std::vector<double> slice10(std::int64_t start, std::int64_t end, std::int64_t step) {
  return to_vec(ops::slice(range({10}), {start}, {end}, {}, {step}));
}

using V = std::vector<double>;

}  // namespace

TEST_F(SliceGatherOpsTest, Slice1dFollowsOnnxClamping) {
  EXPECT_EQ(slice10(2, 8, 2), (V{2, 4, 6}));
  EXPECT_EQ(slice10(2, 9, 3), (V{2, 5, 8}));
  EXPECT_EQ(slice10(-3, kMax, 1), (V{7, 8, 9}));   // negative start, INT64_MAX end
  EXPECT_EQ(slice10(-100, 100, 4), (V{0, 4, 8}));  // both clamped
  EXPECT_EQ(slice10(5, 2, 1), V{});                // empty
  EXPECT_EQ(slice10(kMax, 0, 1), V{});
  EXPECT_EQ(slice10(-1, kMin, -1), (V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));  // full reverse
  EXPECT_EQ(slice10(kMax, kMin, -3), (V{9, 6, 3, 0}));                  // start clamped to 9
  EXPECT_EQ(slice10(7, 2, -2), (V{7, 5, 3}));
  EXPECT_EQ(slice10(-2, -5, -1), (V{8, 7, 6}));
  EXPECT_EQ(slice10(3, -1, -1), V{});  // end -1 means 9, not "before 0"
  EXPECT_EQ(slice10(0, 10, kMax), V{0});
  EXPECT_EQ(slice10(9, kMin, kMin), V{9});
}

TEST_F(SliceGatherOpsTest, Slice2dWithAxes) {
  const Tensor x = range({3, 4});  // rows 0..3, 4..7, 8..11
  const Tensor cols = ops::slice(x, {1}, {3}, {1});
  EXPECT_EQ(cols.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vec(cols), (V{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(to_vec(ops::slice(x, {1}, {3}, {-1})), to_vec(cols));
  // Axes in any order; rows reversed, every other column.
  const Tensor y = ops::slice(x, {0, -1}, {kMax, kMin}, {1, 0}, {2, -1});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vec(y), (V{8, 10, 4, 6, 0, 2}));
  // No axes: the first len(starts) dims.
  EXPECT_EQ(to_vec(ops::slice(x, {1, 1}, {2, 4})), (V{5, 6, 7}));
  EXPECT_EQ(ops::slice(x, {2}, {2}).shape(), (Shape{0, 4}));
}

TEST_F(SliceGatherOpsTest, SliceIsBitExactOnNpu) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI64}) {
    const Tensor x = t == DType::kI64 ? range({4, 5, 6}, t) : Tensor::randn({4, 5, 6}, t, DeviceRef::cpu(), 11);
    const Tensor xn = on_npu({x})[0];
    for (const Ints& steps : {Ints{1, 1, 1}, Ints{2, -1, 1}, Ints{-1, 2, -2}, Ints{1, 1, 3}}) {
      for (bool extreme : {false, true}) {
        // Non-empty slices for the step's sign, with plain or INT64-extreme bounds.
        Ints starts, ends;
        for (auto step : steps) {
          starts.push_back(step > 0 ? (extreme ? -3 : 0) : (extreme ? kMax : -1));
          ends.push_back(step > 0 ? (extreme ? kMax : -1) : (extreme ? kMin : 0));
        }
        const Tensor cpu = ops::slice(x, starts, ends, {0, 1, 2}, steps);
        const Tensor npu = ops::slice(xn, starts, ends, {0, 1, 2}, steps);
        EXPECT_GT(cpu.numel(), 0);
        EXPECT_EQ(npu.shape(), cpu.shape());
        EXPECT_EQ(bytes_of(npu), bytes_of(cpu)) << dtype_name(t) << " steps " << shape_str(steps);
      }
    }
  }
}

TEST_F(SliceGatherOpsTest, SliceRejectsBadAttributes) {
  const Tensor x = range({3, 4});
  EXPECT_THROW(ops::slice(x, {0}, {1}, {}, {0}), InvalidArgument);        // step 0
  EXPECT_THROW(ops::slice(x, {0, 0}, {1, 1}, {1, -1}), InvalidArgument);  // axis twice
  EXPECT_THROW(ops::slice(x, {0}, {1}, {2}), InvalidArgument);            // axis out of range
  EXPECT_THROW(ops::slice(x, {0, 0}, {1}), InvalidArgument);              // lengths differ
  EXPECT_THROW(ops::slice(x, {0}, {1}, {0}, {1, 1}), InvalidArgument);
  EXPECT_THROW(call_op1("Slice", {x}, Attrs{{"starts", Ints{0}}}), InvalidArgument);  // no ends
}

TEST_F(SliceGatherOpsTest, GatherHandComputed) {
  const Tensor x = range({3, 2});  // [[0, 1], [2, 3], [4, 5]]
  const Tensor rows = ops::gather(x, indices({0, 2, -1}, {3}), 0);
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vec(rows), (V{0, 1, 4, 5, 4, 5}));
  // 2-D i32 indices along axis 1 (and as axis -1): shape [3] + [2, 2].
  const Tensor cols = ops::gather(x, indices({1, 0, -2, 1}, {2, 2}, DType::kI32), -1);
  EXPECT_EQ(cols.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(to_vec(cols), (V{1, 0, 0, 1, 3, 2, 2, 3, 5, 4, 4, 5}));
  // A scalar index drops the axis.
  const Tensor one = ops::gather(x, indices({1}, {}), 0);
  EXPECT_EQ(one.shape(), (Shape{2}));
  EXPECT_EQ(to_vec(one), (V{2, 3}));
}

TEST_F(SliceGatherOpsTest, GatherIsBitExactOnNpu) {
  const Tensor rows = indices({3, -1, 0, 2, 2, -4}, {2, 3});               // valid for dim 5
  const Tensor cols = indices({2, -1, 0, 1, -3, 2}, {2, 3}, DType::kI32);  // valid for dims 3, 4
  for (DType t : {DType::kF32, DType::kF16, DType::kI64, DType::kBool}) {
    const Tensor x =
        t == DType::kF32 || t == DType::kF16 ? Tensor::randn({5, 4, 3}, t, DeviceRef::cpu(), 5) : range({5, 4, 3}, t);
    for (std::int64_t axis : {0, 1, -1}) {
      const Tensor& idx = axis == 0 ? rows : cols;
      const Tensor cpu = ops::gather(x, idx, axis);
      const Tensor npu = ops::gather(on_npu({x})[0], on_npu({idx})[0], axis);
      EXPECT_EQ(npu.shape(), cpu.shape());
      EXPECT_EQ(bytes_of(npu), bytes_of(cpu)) << dtype_name(t) << " axis " << axis;
    }
  }
  // The selected rows are the source rows, bit for bit (i64 values as large as 2^62).
  const Tensor big = Tensor::from_ints(std::vector<std::int64_t>{(std::int64_t{1} << 62) + 1, -7}, {2}, DType::kI64);
  EXPECT_EQ(ops::gather(on_npu({big})[0], on_npu({indices({1, 0}, {2})})[0], 0).to_ints(),
            (std::vector<std::int64_t>{-7, (std::int64_t{1} << 62) + 1}));
}

TEST_F(SliceGatherOpsTest, GatherOutOfRangeIndicesAreErrors) {
  const Tensor x = Tensor::from_floats(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2}, DType::kF32);
  // [-dim, dim - 1] is valid: negative indices wrap.
  EXPECT_EQ(to_vec(ops::gather(x, indices({1, -3, -1, 0}, {4}), 0)), (V{3, 4, 1, 2, 5, 6, 1, 2}));
  // ONNX: an index outside it is an error, not zeros. The message names the op, the index and the range.
  for (std::int64_t bad : {std::int64_t{3}, std::int64_t{-4}, kMax, kMin}) {
    const Tensor idx = indices({1, bad, 0}, {3});
    const std::string cpu = error_of([&] { ops::gather(x, idx, 0); });
    EXPECT_TRUE(mentions(cpu, {"Gather", ("index " + std::to_string(bad)).c_str(), "[-3, 2]", "axis 0"}));
    // On the NPU the kernel runs on the device: the fault comes with the next synchronisation (the
    // copy back), naming the op instance, and is then cleared.
    const Tensor y = ops::gather(on_npu({x})[0], on_npu({idx})[0], 0, {.name = "lookup"});
    const std::string npu = error_of([&] { y.cpu(); });
    EXPECT_TRUE(mentions(npu, {"'lookup'", "Gather", ("index " + std::to_string(bad)).c_str(), "[-3, 2]"}));
    EXPECT_NO_THROW(y.cpu());
  }
  // Only the first bad index is reported, and a valid gather on the device afterwards is unaffected.
  EXPECT_TRUE(mentions(error_of([&] { ops::gather(x, indices({7, 9}, {2}), 0); }), {"index 7"}));
  EXPECT_EQ(to_vec(ops::gather(on_npu({x})[0], on_npu({indices({2}, {1})})[0], 0)), (V{5, 6}));
}

TEST_F(SliceGatherOpsTest, GatherRejectsBadArguments) {
  const Tensor x = range({3, 2});
  EXPECT_THROW(ops::gather(x, Tensor::from_floats(std::vector<float>{0}, {1}, DType::kF32), 0), InvalidArgument);
  EXPECT_THROW(ops::gather(x, indices({0}, {1}), 2), InvalidArgument);
  EXPECT_THROW(ops::gather(x, indices({0}, {1}), -3), InvalidArgument);
  EXPECT_THROW(ops::gather(range({1}).view({}), indices({0}, {1}), 0), InvalidArgument);
}

TEST_F(SliceGatherOpsTest, CostCountsOnlyTheSelectedBytes) {
  // An embedding lookup reads the gathered rows, not the whole [50000, 64] f16 table.
  const auto& gather = OpRegistry::instance().schema("Gather");
  EXPECT_EQ(gather.category, OpCategory::kDataMovement);
  const std::vector<TensorMeta> in{{{50000, 64}, DType::kF16}, {{2, 8}, DType::kI64}};
  const auto out = gather.infer(in, Attrs{{"axis", std::int64_t{0}}});
  ASSERT_EQ(out[0].shape, (Shape{2, 8, 64}));
  const KernelCost c = gather.cost(in, out, {});
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.bytes, 2.0 * 16 * 64 * 2 + 16 * 8);
  const auto& slice = OpRegistry::instance().schema("Slice");
  const std::vector<TensorMeta> x{{{100, 10}, DType::kF32}};
  const auto sliced = slice.infer(x, Attrs{{"starts", Ints{0}}, {"ends", Ints{5}}});
  EXPECT_EQ(slice.cost(x, sliced, {}).bytes, 2.0 * 5 * 10 * 4);
}
