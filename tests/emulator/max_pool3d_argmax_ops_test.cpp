// MaxPool3DWithArgmax / MaxPool3DGradWithArgmax vs PyTorch 1.13's max_pool3d_with_indices(_backward)
// on the CPU (ceil_mode, padding, dilation, overlapping windows, a tie, NaN, -inf padding), NPU vs
// CPU kernels, f16, empty batches, bad inputs and bad indices.
#include <gtest/gtest.h>

#include <limits>
#include <utility>

#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using MaxPool3dArgmaxTest = OpTest;
using Ints = std::vector<std::int64_t>;

const double kNan = std::numeric_limits<double>::quiet_NaN();

// x = seq([1,2,3,4,5], 0.3) with a tie x[21] = x[41] = 2 in plane 0 (one window holds both) and
// x[60+26] = x[60+47] = NaN in plane 1 (one window holds both). The reference values come from
//   y, i = F.max_pool3d(x, (2,3,2), (2,2,2), (1,1,1), 1, True, return_indices=True)
//   y.backward(seq(y.shape, 0.8))
Tensor input(DType dtype = DType::kF32) {
  std::vector<double> v = to_vec(seq({1, 2, 3, 4, 5}, 0.3));
  v[21] = v[41] = 2.0;
  v[60 + 26] = v[60 + 47] = kNan;
  std::vector<float> f(v.begin(), v.end());
  return floats(f, {1, 2, 3, 4, 5}, dtype);
}
const Attrs kAttrs{{"kernel", Ints{2, 3, 2}},
                   {"strides", Ints{2, 2, 2}},
                   {"pads", Ints{1, 1, 1}},
                   {"dilations", Ints{1, 1, 1}},
                   {"ceil_mode", 1}};

const std::vector<double> kY = {0.8368988037109375,
                                0.8624042272567749,
                                0.9871001243591309,
                                0.8368988037109375,
                                0.5823306441307068,
                                0.8658339381217957,
                                -0.4197640120983124,
                                0.30202361941337585,
                                0.8658339381217957,
                                0.9881682395935059,
                                2.0,
                                0.5767771601676941,
                                0.973746657371521,
                                0.9891904592514038,
                                0.9901667833328247,
                                0.973746657371521,
                                0.9891904592514038,
                                0.9752752780914307,
                                -0.48717451095581055,
                                -0.04272821545600891,
                                0.6421186327934265,
                                0.8758810758590698,
                                0.991097092628479,
                                0.8216694593429565,
                                0.22245699167251587,
                                -0.1451515257358551,
                                -0.7743366360664368,
                                0.992819607257843,
                                kNan,
                                0.9919813871383667,
                                0.992819607257843,
                                kNan,
                                0.9919813871383667,
                                -0.778630793094635,
                                -0.3823120594024658,
                                0.34073901176452637};
const std::vector<double> kIdx = {5, 2, 3, 5,  6,  19, 15, 17, 19, 20, 21, 23, 55, 37, 54, 55, 37, 38,
                                  0, 7, 9, 10, 11, 13, 15, 16, 18, 45, 47, 28, 45, 47, 28, 35, 57, 59};
// The non-zero entries of x.grad (flat index, value); 5, 19, 37, 55, 45 (plane 1) gather two windows.
const std::vector<std::pair<std::size_t, double>> kDx = {
    {2, 0.920750617980957},    {3, 0.9995258450508118},    {5, 1.6603760719299316},    {6, 0.7588807344436646},
    {15, 0.12129325419664383}, {17, -0.2458605021238327},  {19, -0.10770764946937561}, {20, -0.8351510167121887},
    {21, -0.9775301218032837}, {23, -0.987605094909668},   {37, -0.20042413473129272}, {38, 0.7220872640609741},
    {54, -0.2985617518424988}, {55, -0.7972472906112671},  {60, 0.9233879446983337},   {67, 0.9997124671936035},
    {69, 0.9407305717468262},  {70, 0.7544251680374146},   {71, 0.4660119116306305},   {73, 0.11452611535787582},
    {75, -0.2524602711200714}, {76, -0.5852773189544678},  {78, -0.8388798236846924},  {88, -0.786998450756073},
    {95, 0.4292203485965729},  {105, -1.5970810651779175}, {107, -1.2785634994506836}, {117, 0.7267848253250122},
    {119, 0.9259824156761169}};

std::vector<Tensor> maybe_npu(bool npu, std::vector<Tensor> xs) { return npu ? on_npu(xs) : xs; }

}  // namespace

TEST_F(MaxPool3dArgmaxTest, MatchesPytorch) {
  for (const bool npu : {false, true}) {
    const auto r = call_op("MaxPool3DWithArgmax", maybe_npu(npu, {input()}), kAttrs);
    ASSERT_EQ(r[0].shape(), (Shape{1, 2, 2, 3, 3}));
    EXPECT_EQ(r[1].dtype(), DType::kI64);
    EXPECT_TRUE(all_close(to_vec(r[0]), kY, 0, 0)) << (npu ? "npu" : "cpu");
    EXPECT_TRUE(all_close(to_vec(r[1]), kIdx, 0, 0)) << (npu ? "npu" : "cpu");  // the tie keeps 21, the NaN is 47
    const Tensor dy = seq({1, 2, 2, 3, 3}, 0.8);
    const auto dx = to_vec(call_op1("MaxPool3DGradWithArgmax", maybe_npu(npu, {dy, r[1]}),
                                    {{"input_size", Ints{1, 2, 3, 4, 5}}, {"kernel", Ints{2, 3, 2}}}));
    ASSERT_EQ(dx.size(), 120u);
    std::vector<double> expected(120, 0.0);
    for (const auto& [at, v] : kDx) expected[at] = v;
    EXPECT_TRUE(all_close(dx, expected, 1e-6, 0)) << (npu ? "npu" : "cpu");
  }
}

// CDHW with dilation and without ceil_mode: PyTorch's
//   F.max_pool3d(seq([2,4,5,6], 0.1), (2,2,3), (1,2,1), (0,1,1), (2,1,2), False, return_indices=True)
TEST_F(MaxPool3dArgmaxTest, DilatedUnbatchedMatchesPytorch) {
  const Tensor x = seq({2, 4, 5, 6}, 0.1);
  const Attrs attrs{
      {"kernel", Ints{2, 2, 3}}, {"strides", Ints{1, 2, 1}}, {"pads", Ints{0, 1, 1}}, {"dilations", Ints{2, 1, 2}}};
  const std::vector<double> idx = {3,   4,  3,   4,  73, 72, 71, 70, 21, 88,  21, 88,  91, 90, 91, 92,
                                   105, 38, 105, 38, 55, 54, 55, 56, 3,  2,   3,  2,   69, 70, 71, 70,
                                   87,  20, 87,  20, 91, 90, 35, 34, 37, 104, 37, 104, 55, 54, 53, 52};
  for (const bool npu : {false, true}) {
    const auto r = call_op("MaxPool3DWithArgmax", maybe_npu(npu, {x}), attrs);
    ASSERT_EQ(r[0].shape(), (Shape{2, 2, 3, 4}));
    EXPECT_TRUE(all_close(to_vec(r[1]), idx, 0, 0)) << (npu ? "npu" : "cpu");
    const auto v = to_vec(x), y = to_vec(r[0]), i = to_vec(r[1]);
    for (std::size_t o = 0; o < y.size(); ++o) EXPECT_EQ(y[o], v[(o / 24) * 120 + static_cast<std::size_t>(i[o])]);
  }
}

// All -inf with padding: the padding is never chosen; the index is the window's first tap inside the
// input (PyTorch: F.max_pool3d(full([1,1,3,3,3], -inf), 3, 2, 1, return_indices=True)).
TEST_F(MaxPool3dArgmaxTest, AllMinusInfKeepsTheFirstTapInside) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const Tensor x = floats(std::vector<float>(27, ninf), {1, 1, 3, 3, 3});
  const Attrs attrs{{"kernel", Ints{3, 3, 3}}, {"strides", Ints{2, 2, 2}}, {"pads", Ints{1, 1, 1}}};
  for (const bool npu : {false, true}) {
    const auto r = call_op("MaxPool3DWithArgmax", maybe_npu(npu, {x}), attrs);
    EXPECT_TRUE(all_close(to_vec(r[1]), {0, 1, 3, 4, 9, 10, 12, 13}, 0, 0));
    for (const double y : to_vec(r[0])) EXPECT_EQ(y, static_cast<double>(ninf));
  }
}

TEST_F(MaxPool3dArgmaxTest, DefaultStridesAreTheKernelAndEmptyBatches) {
  const auto r = call_op("MaxPool3DWithArgmax", {seq({2, 3, 4, 4, 6}, 0.2)}, {{"kernel", Ints{2, 2, 3}}});
  EXPECT_EQ(r[0].shape(), (Shape{2, 3, 2, 2, 2}));
  const auto empty = call_op("MaxPool3DWithArgmax", {seq({0, 3, 4, 4, 4}, 0)}, {{"kernel", Ints{2, 2, 2}}});
  EXPECT_EQ(empty[0].shape(), (Shape{0, 3, 2, 2, 2}));
  const auto dx = call_op1("MaxPool3DGradWithArgmax", {seq({0, 3, 2, 2, 2}, 0), i64({}, {0, 3, 2, 2, 2})},
                           {{"input_size", Ints{0, 3, 4, 4, 4}}});
  EXPECT_EQ(dx.shape(), (Shape{0, 3, 4, 4, 4}));
}

// f16 and bf16: the maximum is one of x's values, so the NPU (f32) and CPU (f64) kernels agree exactly.
TEST_F(MaxPool3dArgmaxTest, HalfPrecisionNpuMatchesCpu) {
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    const Tensor h = input(dtype);
    const auto cpu = call_op("MaxPool3DWithArgmax", {h}, kAttrs);
    const auto npu = call_op("MaxPool3DWithArgmax", on_npu({h}), kAttrs);
    EXPECT_EQ(npu[0].dtype(), dtype);
    EXPECT_TRUE(all_close(to_vec(npu[0]), to_vec(cpu[0]), 0, 0));
    EXPECT_EQ(to_vec(cpu[1]), to_vec(npu[1]));
    const Tensor dy = seq({1, 2, 2, 3, 3}, 0.8, dtype);
    const Attrs grad{{"input_size", Ints{1, 2, 3, 4, 5}}};
    const auto dx_cpu = to_vec(call_op1("MaxPool3DGradWithArgmax", {dy, cpu[1]}, grad));
    const auto dx_npu = to_vec(call_op1("MaxPool3DGradWithArgmax", on_npu({dy, npu[1]}), grad));
    EXPECT_TRUE(all_close(dx_npu, dx_cpu, 1e-2, 1e-3));
  }
}

TEST_F(MaxPool3dArgmaxTest, BadInputsAreTypedErrors) {
  const Attrs k2{{"kernel", Ints{2, 2, 2}}};
  auto pool = [&](const Tensor& x, const Attrs& a) {
    return error_of([&] { call_op("MaxPool3DWithArgmax", {x}, a); });
  };
  EXPECT_TRUE(mentions(pool(seq({1, 4, 4}, 0), k2), {"MaxPool3DWithArgmax", "NCDHW or CDHW", "[1, 4, 4]"}));
  EXPECT_TRUE(mentions(pool(input(), {{"kernel", Ints{2, 2}}}), {"MaxPool3DWithArgmax", "kernel must be 3 values"}));
  EXPECT_TRUE(mentions(pool(input(), {}), {"MaxPool3DWithArgmax", "kernel"}));
  EXPECT_TRUE(mentions(pool(input(), {{"kernel", Ints{2, 0, 2}}}), {"kernel must be 3 values"}));
  EXPECT_TRUE(mentions(pool(input(), {{"kernel", Ints{2, 2, 2}}, {"pads", Ints{0, 2, 0}}}),
                       {"MaxPool3DWithArgmax", "pad 2 along H", "half of the kernel size 2"}));
  EXPECT_TRUE(mentions(pool(input(), {{"kernel", Ints{4, 2, 2}}}), {"output size along D", "too small"}));
  EXPECT_TRUE(mentions(pool(input(), {{"kernel", Ints{2, 2, 2}}, {"strides", Ints{1, 0, 1}}}), {"strides"}));
  EXPECT_TRUE(mentions(pool(seq({1, 2, 0, 4, 4}, 0), k2), {"input size along D is 0"}));
  EXPECT_TRUE(mentions(pool(i64({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 2, 2}), k2), {"MaxPool3DWithArgmax"}));

  auto grad = [&](std::vector<Tensor> in, const Attrs& a) {
    return error_of([&] { to_vec(call_op1("MaxPool3DGradWithArgmax", in, a)); });
  };
  const Attrs size{{"input_size", Ints{1, 1, 2, 2, 2}}};
  EXPECT_TRUE(mentions(grad({seq({1, 1, 1, 1, 2}, 0), seq({1, 1, 1, 1, 2}, 0)}, size),
                       {"MaxPool3DGradWithArgmax", "indices must be an integer tensor"}));
  EXPECT_TRUE(mentions(grad({seq({1, 1, 1, 1, 2}, 0), i64({0, 1}, {1, 1, 1, 2, 1})}, size), {"differ in shape"}));
  EXPECT_TRUE(mentions(grad({seq({1, 1, 1, 1, 2}, 0), i64({0, 1}, {1, 1, 1, 1, 2})}, {}), {"input_size"}));
  EXPECT_TRUE(
      mentions(grad({seq({1, 1, 1, 1, 2}, 0), i64({0, 1}, {1, 1, 1, 1, 2})}, {{"input_size", Ints{1, 2, 2, 2, 2}}}),
               {"input_size [1, 2, 2, 2, 2] does not fit dy [1, 1, 1, 1, 2]"}));
  // An index outside the plane is a kernel fault, on both backends.
  for (const bool npu : {false, true}) {
    EXPECT_TRUE(mentions(grad(maybe_npu(npu, {seq({1, 1, 1, 1, 2}, 0), i64({0, 8}, {1, 1, 1, 1, 2})}), size),
                         {"MaxPool3DGradWithArgmax", "index 8", "[0, 8)"}))
        << (npu ? "npu" : "cpu");
    EXPECT_TRUE(
        mentions(grad(maybe_npu(npu, {seq({1, 1, 1, 1, 2}, 0), i64({-1, 0}, {1, 1, 1, 1, 2})}), size), {"index -1"}));
  }
}

// Note [Max pooling in place]: the NPU's f32 path keeps store<float>'s overflow mode and flags.
TEST_F(MaxPool3dArgmaxTest, NpuF32PathKeepsOverflowMode) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = floats({1, inf, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 2, 2});
  const Attrs k2{{"kernel", Ints{2, 2, 2}}};
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kSaturation});
  EXPECT_EQ(to_vec(call_op("MaxPool3DWithArgmax", on_npu({x}), k2)[0])[0], std::numeric_limits<float>::max());
  EXPECT_TRUE(Runtime::get().device(0).float_status());
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kInfNan});
  const auto r = call_op("MaxPool3DWithArgmax", on_npu({x}), k2);
  EXPECT_EQ(to_vec(r[0])[0], inf);
  EXPECT_EQ(to_vec(r[1])[0], 1);
}
