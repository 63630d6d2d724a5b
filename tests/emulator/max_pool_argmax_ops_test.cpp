// MaxPoolWithArgmax / MaxPoolGradWithArgmax vs PyTorch's max_pool2d_with_indices(_backward) (ceil
// mode, padding, dilation, NaN), NPU vs CPU, bad indices and shapes.
#include <gtest/gtest.h>

#include <limits>

#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using MaxPoolArgmaxTest = OpTest;
using Ints = std::vector<std::int64_t>;

// x = seq([1,2,5,5], 0.3) with x[0,1,1,1] = x[0,1,1,2] = NaN; kernel [3,2], strides [2,2], pads [1,1],
// dilations [1,1], ceil_mode.
Tensor input() {
  std::vector<double> v = to_vec(seq({1, 2, 5, 5}, 0.3));
  v[25 + 6] = v[25 + 7] = std::numeric_limits<double>::quiet_NaN();
  std::vector<float> f(v.begin(), v.end());
  return floats(f, {1, 2, 5, 5});
}
const Attrs kAttrs{
    {"kernel", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1}}, {"dilations", Ints{1, 1}}, {"ceil_mode", 1}};
const double kNan = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_F(MaxPoolArgmaxTest, MatchesPytorch) {
  for (const bool npu : {false, true}) {
    const auto r = call_op("MaxPoolWithArgmax", npu ? on_npu({input()}) : std::vector<Tensor>{input()}, kAttrs);
    ASSERT_EQ(r[0].shape(), (Shape{1, 2, 3, 3}));
    EXPECT_EQ(r[1].dtype(), DType::kI64);
    EXPECT_TRUE(all_close(to_vec(r[0]),
                          {0.8368988037109375, 0.8624042272567749, 0.9871001243591309, 0.8368988037109375,
                           0.5823306441307068, 0.8658339381217957, 0.9881682395935059, 0.976758599281311,
                           0.8658339381217957, -0.12489503622055054, kNan, 0.30851301550865173, 0.6316109895706177,
                           kNan, 0.9752752780914307, 0.5711968541145325, 0.23572377860546112, -0.4073549211025238},
                          0, 0))
        << (npu ? "npu" : "cpu");
    EXPECT_TRUE(all_close(to_vec(r[1]), {5, 2, 3, 5, 6, 19, 20, 21, 19, 0, 7, 9, 10, 7, 13, 15, 16, 24}, 0, 0));
    const Tensor dy = seq({1, 2, 3, 3}, 0.8);
    const auto dx = to_vec(call_op1("MaxPoolGradWithArgmax", npu ? on_npu({dy, r[1]}) : std::vector<Tensor>{dy, r[1]},
                                    {{"input_size", Ints{1, 2, 5, 5}}}));
    ASSERT_EQ(dx.size(), 50u);
    // Overlapping windows add up (index 5 twice, 19 twice).
    EXPECT_NEAR(dx[5], 1.6603760123252869, 1e-6);
    EXPECT_NEAR(dx[2], 0.920750617980957, 1e-6);
    EXPECT_NEAR(dx[25 + 7], -1.6010096669197083, 1e-6);
    EXPECT_NEAR(dx[49], 0.7220872640609741, 1e-6);
    EXPECT_EQ(dx[0], 0.0);
  }
}

TEST_F(MaxPoolArgmaxTest, DefaultStridesAreTheKernelAndChwWorks) {
  const Tensor x = seq({3, 4, 4}, 0.1);
  const auto r = call_op("MaxPoolWithArgmax", {x}, {{"kernel", Ints{2, 2}}});
  EXPECT_EQ(r[0].shape(), (Shape{3, 2, 2}));
  const auto v = to_vec(x), y = to_vec(r[0]), idx = to_vec(r[1]);
  for (std::size_t o = 0; o < y.size(); ++o) EXPECT_EQ(y[o], v[(o / 4) * 16 + static_cast<std::size_t>(idx[o])]);
}

TEST_F(MaxPoolArgmaxTest, ErrorsAndFaults) {
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op("MaxPoolWithArgmax", {input()}, {{"kernel", Ints{2, 2}}, {"pads", Ints{2, 2}}});
                       }),
                       {"MaxPoolWithArgmax", "pad 2", "half of the kernel size 2"}));
  EXPECT_TRUE(
      mentions(error_of([&] { call_op("MaxPoolWithArgmax", {input()}, {}); }), {"MaxPoolWithArgmax", "kernel"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("MaxPoolGradWithArgmax", {seq({1, 1, 1, 2}, 0), i64({0, 99}, {1, 1, 1, 2})},
                                  {{"input_size", Ints{1, 1, 3, 3}}});
                       }),
                       {"MaxPoolGradWithArgmax", "index 99", "[0, 9)"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("MaxPoolGradWithArgmax", {seq({1, 1, 1, 2}, 0), i64({0, 1}, {1, 1, 1, 2})},
                                  {{"input_size", Ints{1, 2, 3, 3}}});
                       }),
                       {"MaxPoolGradWithArgmax", "input_size [1, 2, 3, 3] does not fit dy [1, 1, 1, 2]"}));
}

// Note [Max pooling in place]: the NPU's f32 path keeps store<float>'s flags and overflow mode, and its
// faults; f16 takes the general path.
TEST_F(MaxPoolArgmaxTest, NpuF32PathKeepsOverflowModeAndFaults) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = floats({1, inf, 3, 4}, {1, 1, 2, 2});
  const Attrs k2{{"kernel", Ints{2, 2}}};
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kSaturation});
  EXPECT_EQ(to_vec(call_op("MaxPoolWithArgmax", on_npu({x}), k2)[0])[0], std::numeric_limits<float>::max());
  EXPECT_TRUE(Runtime::get().device(0).float_status());
  Runtime::configure(RuntimeOptions{.overflow_mode = OverflowMode::kInfNan});
  EXPECT_EQ(to_vec(call_op("MaxPoolWithArgmax", on_npu({x}), k2)[0])[0], inf);
  EXPECT_TRUE(mentions(error_of([&] {
                         to_vec(call_op1("MaxPoolGradWithArgmax",
                                         on_npu({seq({1, 1, 1, 2}, 0), i64({0, 99}, {1, 1, 1, 2})}),
                                         {{"input_size", Ints{1, 1, 3, 3}}}));
                       }),
                       {"MaxPoolGradWithArgmax", "index 99"}));
  const Tensor h = seq({2, 3, 6, 6}, 0.4, DType::kF16);
  const auto cpu = call_op("MaxPoolWithArgmax", {h}, kAttrs);
  const auto npu16 = call_op("MaxPoolWithArgmax", on_npu({h}), kAttrs);
  EXPECT_EQ(to_vec(cpu[0]), to_vec(npu16[0]));
  EXPECT_EQ(to_vec(cpu[1]), to_vec(npu16[1]));
}
