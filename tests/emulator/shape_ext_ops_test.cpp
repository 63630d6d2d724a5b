// Flatten, Squeeze, Unsqueeze, Identity, Expand, DepthToSpace, SpaceToDepth: hand-computed shapes
// and values on the CPU, NPU bytes identical to the CPU's for f32, f16, bf16, i64, bool, and bad
// shapes / attributes rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using npuscope::emulator::ops::Ints;

namespace {

class ShapeExtOpsTest : public OpTest {};

Tensor iota(Shape shape, DType dtype = DType::kF32) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return floats(v, std::move(shape), dtype);
}

Doubles iota_values(std::int64_t n) {
  Doubles v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return v;
}

Shape shape_of(const char* op, const Tensor& x, const Attrs& attrs) { return call_op1(op, {x}, attrs).shape(); }

}  // namespace

TEST_F(ShapeExtOpsTest, FlattenSplitsTheDimsAtAxis) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_EQ(shape_of("Flatten", x, {}), (Shape{2, 12}));  // default axis 1
  EXPECT_EQ(shape_of("Flatten", x, {{"axis", std::int64_t{0}}}), (Shape{1, 24}));
  EXPECT_EQ(shape_of("Flatten", x, {{"axis", std::int64_t{2}}}), (Shape{6, 4}));
  EXPECT_EQ(shape_of("Flatten", x, {{"axis", std::int64_t{3}}}), (Shape{24, 1}));
  EXPECT_EQ(shape_of("Flatten", x, {{"axis", std::int64_t{-1}}}), (Shape{6, 4}));
  EXPECT_EQ(shape_of("Flatten", x, {{"axis", std::int64_t{-3}}}), (Shape{1, 24}));
  EXPECT_EQ(to_vec(call_op1("Flatten", {x}, {})), iota_values(24));
  EXPECT_THROW(call_op1("Flatten", {x}, {{"axis", std::int64_t{4}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Flatten", {x}, {{"axis", std::int64_t{-4}}}), InvalidArgument);
}

TEST_F(ShapeExtOpsTest, SqueezeAndUnsqueeze) {
  const Tensor x = iota({1, 3, 1, 2});
  EXPECT_EQ(shape_of("Squeeze", x, {}), (Shape{3, 2}));  // no axes: every size-1 dim
  EXPECT_EQ(shape_of("Squeeze", x, {{"axes", Ints{0}}}), (Shape{3, 1, 2}));
  EXPECT_EQ(shape_of("Squeeze", x, {{"axes", Ints{-2, 0}}}), (Shape{3, 2}));
  EXPECT_EQ(to_vec(call_op1("Squeeze", {x}, {})), iota_values(6));
  EXPECT_THROW(call_op1("Squeeze", {x}, {{"axes", Ints{1}}}), InvalidArgument);      // size 3
  EXPECT_THROW(call_op1("Squeeze", {x}, {{"axes", Ints{0, -4}}}), InvalidArgument);  // twice
  EXPECT_THROW(call_op1("Squeeze", {x}, {{"axes", Ints{4}}}), InvalidArgument);

  const Tensor y = iota({3, 2});
  EXPECT_EQ(shape_of("Unsqueeze", y, {{"axes", Ints{0, 3}}}), (Shape{1, 3, 2, 1}));
  EXPECT_EQ(shape_of("Unsqueeze", y, {{"axes", Ints{-1}}}), (Shape{3, 2, 1}));
  EXPECT_EQ(shape_of("Unsqueeze", y, {{"axes", Ints{2, 0}}}), (Shape{1, 3, 1, 2}));  // unsorted
  EXPECT_EQ(shape_of("Unsqueeze", floats({5}, {}), {{"axes", Ints{0}}}), (Shape{1}));
  EXPECT_EQ(to_vec(call_op1("Unsqueeze", {y}, {{"axes", Ints{1}}})), iota_values(6));
  EXPECT_THROW(call_op1("Unsqueeze", {y}, {}), InvalidArgument);
  EXPECT_THROW(call_op1("Unsqueeze", {y}, {{"axes", Ints{0, 0}}}), InvalidArgument);
  EXPECT_THROW(call_op1("Unsqueeze", {y}, {{"axes", Ints{3}}}), InvalidArgument);  // output rank 3
}

TEST_F(ShapeExtOpsTest, IdentityCopiesBytesOfEveryDtype) {
  // bf16 NaN with a payload and f16 -0 survive only a byte copy.
  const std::uint16_t bf16_bits[] = {0x7fc1, 0x8000, 0x3f80};
  const Tensor bf = Tensor::from_bytes(bf16_bits, {3}, DType::kBF16);
  const Tensor neg_zero = floats({-0.0f, 1.5f}, {2}, DType::kF16);
  const Tensor flags = ints({1, 0, 1}, {3}, DType::kBool);
  const Tensor big = ints({(std::int64_t{1} << 62) + 1, -3}, {2});
  for (const Tensor& t : {bf, neg_zero, flags, big}) {
    EXPECT_EQ(bytes_of(call_op1("Identity", {t})), bytes_of(t));
    EXPECT_TRUE(npu_bytes_match_cpu("Identity", {t}));
  }
  EXPECT_EQ(call_op1("Identity", {big}).to_ints(), big.to_ints());
}

TEST_F(ShapeExtOpsTest, ExpandBroadcastsBothWays) {
  const Tensor x = floats({1, 2, 3}, {3, 1});
  const Tensor y = call_op1("Expand", {x}, {{"shape", Ints{2, 1, 4}}});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  Doubles want;
  for (int rep = 0; rep < 2; ++rep) {
    for (double v : {1.0, 2.0, 3.0}) want.insert(want.end(), 4, v);
  }
  EXPECT_EQ(to_vec(y), want);
  // A shape smaller than the input keeps the input's dims (ONNX's bidirectional broadcast).
  EXPECT_EQ(shape_of("Expand", x, {{"shape", Ints{1}}}), (Shape{3, 1}));
  EXPECT_EQ(to_vec(call_op1("Expand", {floats({7}, {})}, {{"shape", Ints{2, 2}}})), (Doubles{7, 7, 7, 7}));
  EXPECT_THROW(call_op1("Expand", {x}, {{"shape", Ints{2, 4}}}), InvalidArgument);  // 3 vs 2
  EXPECT_THROW(call_op1("Expand", {x}, {}), InvalidArgument);
  EXPECT_THROW(call_op1("Expand", {x}, {{"shape", Ints{-1, 2}}}), InvalidArgument);
}

TEST_F(ShapeExtOpsTest, DepthToSpaceDcrAndCrd) {
  // [1, 8, 1, 1] = 0..7, blocksize 2: two output channels of 2x2.
  const Tensor x = iota({1, 8, 1, 1});
  const Tensor dcr = call_op1("DepthToSpace", {x}, {{"blocksize", std::int64_t{2}}});
  EXPECT_EQ(dcr.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(to_vec(dcr), (Doubles{0, 2, 4, 6, 1, 3, 5, 7}));  // channel (i·2 + j)·2 + c
  const Tensor crd = call_op1("DepthToSpace", {x}, {{"blocksize", std::int64_t{2}}, {"mode", std::string("CRD")}});
  EXPECT_EQ(to_vec(crd), (Doubles{0, 1, 2, 3, 4, 5, 6, 7}));  // channel c·4 + i·2 + j
  // ONNX's example: [1, 8, 2, 3] = 0..47 (first two output rows of each mode).
  const Tensor big = iota({1, 8, 2, 3});
  const auto d = to_vec(call_op1("DepthToSpace", {big}, {{"blocksize", std::int64_t{2}}}));
  EXPECT_EQ(Doubles(d.begin(), d.begin() + 12), (Doubles{0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38}));
  const auto c =
      to_vec(call_op1("DepthToSpace", {big}, {{"blocksize", std::int64_t{2}}, {"mode", std::string("CRD")}}));
  EXPECT_EQ(Doubles(c.begin(), c.begin() + 12), (Doubles{0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20}));
}

TEST_F(ShapeExtOpsTest, SpaceToDepthInvertsDepthToSpaceDcr) {
  const Tensor x = floats({1, 2, 3, 4}, {1, 1, 2, 2});
  const Tensor y = call_op1("SpaceToDepth", {x}, {{"blocksize", std::int64_t{2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 4, 1, 1}));
  EXPECT_EQ(to_vec(y), (Doubles{1, 2, 3, 4}));
  const Tensor r = Tensor::randn({2, 3, 4, 6}, DType::kF32, DeviceRef::cpu(), 5);
  const Tensor s = call_op1("SpaceToDepth", {r}, {{"blocksize", std::int64_t{2}}});
  EXPECT_EQ(s.shape(), (Shape{2, 12, 2, 3}));
  EXPECT_EQ(bytes_of(call_op1("DepthToSpace", {s}, {{"blocksize", std::int64_t{2}}})), bytes_of(r));
}

TEST_F(ShapeExtOpsTest, NpuBytesMatchCpu) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor x = Tensor::randn({2, 8, 4, 6}, t, DeviceRef::cpu(), 11);
    EXPECT_TRUE(npu_bytes_match_cpu("Flatten", {x}, {{"axis", std::int64_t{2}}}));
    EXPECT_TRUE(npu_bytes_match_cpu("Unsqueeze", {x}, {{"axes", Ints{0}}}));
    EXPECT_TRUE(npu_bytes_match_cpu("Expand", {x}, {{"shape", Ints{3, 1, 1, 1, 1}}}));
    EXPECT_TRUE(
        npu_bytes_match_cpu("DepthToSpace", {x}, {{"blocksize", std::int64_t{2}}, {"mode", std::string("CRD")}}));
    EXPECT_TRUE(npu_bytes_match_cpu("SpaceToDepth", {x}, {{"blocksize", std::int64_t{2}}}));
  }
  const Tensor i = ints({1, -2, 3, (std::int64_t{1} << 60), 5, 6, 7, 8}, {1, 8, 1, 1});
  EXPECT_TRUE(npu_bytes_match_cpu("DepthToSpace", {i}, {{"blocksize", std::int64_t{2}}}));
  EXPECT_TRUE(npu_bytes_match_cpu("Squeeze", {i}, {}));
  const Tensor b = ints({1, 0, 0, 1}, {1, 1, 2, 2}, DType::kBool);
  EXPECT_TRUE(npu_bytes_match_cpu("SpaceToDepth", {b}, {{"blocksize", std::int64_t{2}}}));
  EXPECT_TRUE(npu_bytes_match_cpu("Expand", {b}, {{"shape", Ints{2, 1, 1, 1}}}));
}

TEST_F(ShapeExtOpsTest, BlockOpsRejectBadShapes) {
  const Tensor x = iota({1, 6, 2, 2});
  EXPECT_THROW(call_op1("DepthToSpace", {x}, {{"blocksize", std::int64_t{2}}}), InvalidArgument);  // 6 % 4
  EXPECT_THROW(call_op1("DepthToSpace", {x}, {}), InvalidArgument);
  EXPECT_THROW(
      call_op1("DepthToSpace", {iota({1, 4, 2, 2})}, {{"blocksize", std::int64_t{2}}, {"mode", std::string("XYZ")}}),
      InvalidArgument);
  EXPECT_THROW(call_op1("SpaceToDepth", {iota({1, 1, 3, 2})}, {{"blocksize", std::int64_t{2}}}), InvalidArgument);
  EXPECT_THROW(call_op1("SpaceToDepth", {iota({4, 2, 2})}, {{"blocksize", std::int64_t{2}}}), InvalidArgument);
  EXPECT_THROW(call_op1("SpaceToDepth", {x}, {{"blocksize", std::int64_t{0}}}), InvalidArgument);
}

TEST_F(ShapeExtOpsTest, SchemasAreDataMovement) {
  for (const char* op : {"Flatten", "Squeeze", "Unsqueeze", "Identity", "Expand", "DepthToSpace", "SpaceToDepth"}) {
    const auto& schema = OpRegistry::instance().schema(op);
    EXPECT_EQ(schema.category, OpCategory::kDataMovement) << op;
  }
  const auto& expand = OpRegistry::instance().schema("Expand");
  const std::vector<TensorMeta> in{{{3, 1}, DType::kF32}};
  const auto out = expand.infer(in, Attrs{{"shape", Ints{3, 4}}});
  const KernelCost c = expand.cost(in, out, {});
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.bytes, 4.0 * (3 + 12));
}

// blocksize comes from the model: b² overflowed int64 for b = 2^32 (to 0) and the division by it
// crashed the process (SIGFPE) for b = 2^40. Now any b outside [1, 2^31 - 1] is an error naming it.
TEST_F(ShapeExtOpsTest, HugeBlocksizeIsAnErrorNotACrash) {
  const Tensor x = iota({1, 4, 2, 2});
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    for (std::int64_t b : {std::int64_t{1} << 40, std::int64_t{1} << 32, std::int64_t{1} << 31,
                           std::numeric_limits<std::int64_t>::max(), std::int64_t{-4}}) {
      EXPECT_TRUE(mentions(error_of([&] {
                             call_op1(op, {x}, {{"blocksize", b}});
                           }),
                           {op, ("blocksize " + std::to_string(b)).c_str(), "[1, 2147483647]"}))
          << op << " " << b;
    }
    // In range but not fitting the input: the usual shape error, no crash.
    EXPECT_THROW(call_op1(op, {x}, {{"blocksize", std::int64_t{46341}}}), InvalidArgument);
  }
}

TEST_F(ShapeExtOpsTest, ExpandToAHugeShapeIsAnErrorBeforeAllocating) {
  const Tensor one = iota({1});
  const std::int64_t p40 = std::int64_t{1} << 40;
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Expand", {one}, {{"shape", Ints{p40, p40}}});
                       }),
                       {"Expand", "[1099511627776, 1099511627776]", "too large", "overflows"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("Expand", {one}, {{"shape", Ints{std::int64_t{1} << 20, 1 << 20}}});
                       }),
                       {"Expand", "4398046511104 bytes", "the limit is 1099511627776 bytes"}));
}
