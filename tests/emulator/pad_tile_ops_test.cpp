// Pad (constant / reflect / edge / wrap, negative pads), Tile and Roll: hand-computed values on the CPU
// (numpy.pad and numpy.tile give the same), the constant converted once to the dtype, NPU bytes
// identical to the CPU's for f32, f16, i64 and bool, and bad attributes rejected.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using npuscope::emulator::ops::Ints;

namespace {

class PadTileOpsTest : public OpTest {};

Tensor pad(const Tensor& x, const Ints& pads, const std::string& mode = "constant", double value = 0) {
  return call_op1("Pad", {x}, {{"pads", pads}, {"mode", mode}, {"value", value}});
}

}  // namespace

TEST_F(PadTileOpsTest, ConstantPadHandValues) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  const Tensor y = pad(x, {1, 0, 0, 1}, "constant", 9);  // one row before, one column after
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(to_vec(y), (Doubles{9, 9, 9, 1, 2, 9, 3, 4, 9}));
  // Default value 0; mode defaults to constant.
  EXPECT_EQ(to_vec(call_op1("Pad", {floats({5}, {1})}, {{"pads", Ints{1, 2}}})), (Doubles{0, 5, 0, 0}));
  // The constant is converted once to the dtype: 0.1 in f16 is 0.0999755859375.
  const Tensor h = pad(floats({1}, {1}, DType::kF16), {1, 0}, "constant", 0.1);
  EXPECT_EQ(to_vec(h), (Doubles{0.0999755859375, 1}));
  const std::int64_t big = (std::int64_t{1} << 40) + 3;
  EXPECT_EQ(pad(ints({big}, {1}), {0, 2}, "constant", -7).to_ints(), (I64s{big, -7, -7}));
  EXPECT_EQ(pad(ints({0}, {1}, DType::kBool), {1, 0}, "constant", 2).to_ints(), (I64s{1, 0}));
}

TEST_F(PadTileOpsTest, ReflectEdgeWrapHandValues) {
  const Tensor x = floats({1, 2, 3}, {3});
  EXPECT_EQ(to_vec(pad(x, {2, 2}, "reflect")), (Doubles{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(to_vec(pad(x, {5, 0}, "reflect")), (Doubles{2, 1, 2, 3, 2, 1, 2, 3}));  // longer than the dim
  EXPECT_EQ(to_vec(pad(x, {2, 1}, "edge")), (Doubles{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(to_vec(pad(x, {2, 1}, "wrap")), (Doubles{2, 3, 1, 2, 3, 1}));
  EXPECT_EQ(to_vec(pad(floats({4}, {1}), {2, 1}, "reflect")), (Doubles{4, 4, 4, 4}));
  // ONNX's 2-D examples: two columns before.
  const Tensor m = floats({1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, {3, 2});
  EXPECT_EQ(to_vec(pad(m, {0, 2, 0, 0}, "reflect")),
            to_vec(floats({1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}, {12})));
  EXPECT_EQ(to_vec(pad(m, {0, 2, 0, 0}, "edge")),
            to_vec(floats({1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}, {12})));
}

TEST_F(PadTileOpsTest, NegativePadsCropFirst) {
  const Tensor x = floats({1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(to_vec(pad(x, {-1, 2})), (Doubles{2, 3, 4, 5, 0, 0}));
  EXPECT_EQ(to_vec(pad(x, {-1, -3})), (Doubles{2}));
  // Reflect and edge pad the cropped input [2, 3, 4, 5].
  EXPECT_EQ(to_vec(pad(x, {-1, 2}, "reflect")), (Doubles{2, 3, 4, 5, 4, 3}));
  EXPECT_EQ(to_vec(pad(x, {2, -2}, "edge")), (Doubles{1, 1, 1, 2, 3}));
  EXPECT_EQ(pad(x, {-5, 0}).shape(), (Shape{0}));
  const Tensor m = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = pad(m, {-1, 1, 0, -1});  // drop row 0, a column before, drop the last column
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(to_vec(y), (Doubles{0, 4, 5}));
}

TEST_F(PadTileOpsTest, TileHandValues) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  const Tensor y = call_op1("Tile", {x}, {{"repeats", Ints{2, 3}}});
  EXPECT_EQ(y.shape(), (Shape{4, 6}));
  EXPECT_EQ(to_vec(y), (Doubles{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(call_op1("Tile", {x}, {{"repeats", Ints{0, 1}}}).shape(), (Shape{0, 2}));
  EXPECT_EQ(call_op1("Tile", {ints({-1, 5}, {2})}, {{"repeats", Ints{2}}}).to_ints(), (I64s{-1, 5, -1, 5}));
}

TEST_F(PadTileOpsTest, NpuBytesMatchCpu) {
  for (DType t : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({3, 5, 7}, t, DeviceRef::cpu(), 3);
    for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
      const Attrs a{{"pads", Ints{1, -2, 6, 0, 3, 2}}, {"mode", std::string(mode)}, {"value", 1.5}};
      EXPECT_TRUE(npu_bytes_match_cpu("Pad", {x}, a)) << mode;
    }
    EXPECT_TRUE(npu_bytes_match_cpu("Tile", {x}, {{"repeats", Ints{2, 1, 3}}}));
  }
  const Tensor i = ints({1, -2, 3, (std::int64_t{1} << 60)}, {2, 2});
  EXPECT_TRUE(npu_bytes_match_cpu("Pad", {i}, {{"pads", Ints{1, 1, 1, 1}}, {"mode", std::string("reflect")}}));
  EXPECT_TRUE(npu_bytes_match_cpu("Tile", {i}, {{"repeats", Ints{1, 2}}}));
  const Tensor b = ints({1, 0, 0}, {3}, DType::kBool);
  EXPECT_TRUE(npu_bytes_match_cpu("Pad", {b}, {{"pads", Ints{2, 2}}, {"value", 1.0}}));
}

TEST_F(PadTileOpsTest, RejectsBadAttributes) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(pad(x, {1, 1}), InvalidArgument);                    // 2 values for 2 dims
  EXPECT_THROW(pad(x, {-3, 0, 0, 0}), InvalidArgument);             // crops 3 of 2
  EXPECT_THROW(pad(x, {1, 0, 0, 0}, "mirror"), InvalidArgument);    // unknown mode
  EXPECT_THROW(pad(x, {-2, 0, 1, 0}, "reflect"), InvalidArgument);  // nothing left to reflect
  EXPECT_THROW(call_op1("Tile", {x}, {{"repeats", Ints{2}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Tile", {x}, {{"repeats", Ints{2, -1}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Tile", {x}, {}), InvalidArgument);
}

TEST_F(PadTileOpsTest, CostIsBytesOnly) {
  const auto& schema = OpRegistry::instance().schema("Pad");
  EXPECT_EQ(schema.category, OpCategory::kDataMovement);
  const std::vector<TensorMeta> in{{{2, 3}, DType::kF16}};
  const auto out = schema.infer(in, Attrs{{"pads", Ints{1, 1, 1, 1}}});
  ASSERT_EQ(out[0].shape, (Shape{4, 5}));
  const KernelCost c = schema.cost(in, out, {});
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.bytes, 2.0 * (6 + 20));
}

// Pads and repeats come from the model: sizes derived from them are checked, never wrapped
// (Note [Sizes from user input]). Before, reflect pads of INT64_MAX gave a wrapped shape, and
// constant pads of INT64_MAX on both sides silently gave a small output.
TEST_F(PadTileOpsTest, HugePadsAndRepeatsAreErrorsNotWrappedShapes) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const char* mode : {"reflect", "constant", "edge", "wrap"}) {
    EXPECT_TRUE(mentions(error_of([&] {
                           pad(x, {0, max, 0, 0}, mode);
                         }),
                         {"Pad", "dim 1", "9223372036854775807", "overflows int64"}))
        << mode;
    EXPECT_TRUE(mentions(error_of([&] { pad(x, {0, max, 0, max}, mode); }), {"Pad", "overflows int64"})) << mode;
  }
  EXPECT_TRUE(mentions(error_of([&] { pad(x, {0, min, 0, 0}); }), {"Pad", "-9223372036854775808", "crop more than"}));
  // In range but larger than any tensor may be: the size limit, named with the op.
  EXPECT_TRUE(mentions(error_of([&] {
                         pad(x, {0, std::int64_t{1} << 45, 0, 0}, "reflect");
                       }),
                       {"Pad", "too large", "1099511627776"}));
  const auto tile = [&](Ints repeats) { return call_op1("Tile", {x}, {{"repeats", repeats}}); };
  EXPECT_TRUE(mentions(error_of([&] { tile({std::int64_t{1} << 62, 4}); }), {"Tile", "repeats", "overflows int64"}));
  EXPECT_TRUE(mentions(error_of([&] { tile({std::int64_t{1} << 30, std::int64_t{1} << 20}); }), {"Tile", "too large"}));
}

TEST_F(PadTileOpsTest, RollHandValues) {
  const Tensor x = floats({0, 1, 2, 3, 4, 5}, {2, 3});
  // torch.roll(x, 1, 1), torch.roll(x, (-1, 1), (0, 1)), torch.roll(x, 2) (flattened), a shift above the dim.
  EXPECT_EQ(to_vec(call_op1("Roll", {x}, {{"shifts", Ints{1}}, {"dims", Ints{1}}})),
            (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(to_vec(call_op1("Roll", {x}, {{"shifts", Ints{-1, 1}}, {"dims", Ints{0, -1}}})),
            (std::vector<double>{5, 3, 4, 2, 0, 1}));
  EXPECT_EQ(to_vec(call_op1("Roll", {x}, {{"shifts", Ints{2}}})), (std::vector<double>{4, 5, 0, 1, 2, 3}));
  EXPECT_EQ(to_vec(call_op1("Roll", {x}, {{"shifts", Ints{4}}, {"dims", Ints{1}}})),
            (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(to_vec(call_op1("Roll", on_npu({x}), {{"shifts", Ints{1}}, {"dims", Ints{1}}})),
            (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Roll", {x}, {{"shifts", Ints{1, 2}}, {"dims", Ints{0}}});
                       }),
                       {"Roll", "same length"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("Roll", {x}, {{"shifts", Ints{1}}, {"dims", Ints{2}}}); }), {"Roll"}));
}
