// Det: hand-computed determinants (with a row swap, singular, batched), NPU vs CPU in f32 and f16,
// and the error for non-square input.
#include <gtest/gtest.h>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

using DetTest = OpTest;

TEST_F(DetTest, HandComputed) {
  EXPECT_TRUE(all_close(to_vec(call_op1("Det", {floats({1, 2, 3, 4}, {2, 2})})), {-2}, 1e-12, 1e-12));
  // A zero first pivot needs a row swap: det [[0, 1], [1, 0]] = -1.
  EXPECT_TRUE(all_close(to_vec(call_op1("Det", {floats({0, 1, 1, 0}, {2, 2})})), {-1}, 1e-12, 0));
  // Batched [2, 3, 3]: diag(2, 3, 4) and a singular matrix.
  const Tensor x = floats({2, 0, 0, 0, 3, 0, 0, 0, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 3, 3});
  const Tensor y = call_op1("Det", {x});
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_TRUE(all_close(to_vec(y), {24, 0}, 1e-12, 1e-12));
}

TEST_F(DetTest, NpuMatchesCpu) {
  const std::vector<float> v{1.5f, -2, 0.5f, 3, 1, -1, 0.25f, 2, 4, 2, -1, 0.5f, 1, 3, -2, 1, 0.5f, 1};
  for (DType t : {DType::kF32, DType::kF16}) {
    EXPECT_TRUE(npu_close_to_cpu("Det", {floats(v, {2, 3, 3}, t)}, {}, 4e-3, 1e-3)) << dtype_name(t);
  }
}

TEST_F(DetTest, NonSquareIsAnError) {
  EXPECT_TRUE(mentions(error_of([] {
                         call_op1("Det", {floats({1, 2, 3, 4, 5, 6}, {2, 3})});
                       }),
                       {"Det", "square", "[2, 3]"}));
  EXPECT_TRUE(mentions(error_of([] { call_op1("Det", {ints({1}, {1, 1})}); }), {"Det", "i64"}));
}
