// MaxUnpool: values scattered to MaxPool's flat positions, the default and explicit output shapes,
// NPU bytes equal to the CPU's, and the errors (a bad index is a kernel fault).
#include <gtest/gtest.h>

#include "emulator/ext_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

using MaxUnpoolTest = OpTest;

TEST_F(MaxUnpoolTest, ScattersToTheIndices) {
  const Tensor x = floats({1, 2, 3, 4}, {1, 1, 2, 2}), i = ints({5, 7, 13, 15}, {1, 1, 2, 2});
  const Attrs a{{"kernel_shape", Shape{2, 2}}, {"strides", Shape{2, 2}}};
  const Tensor y = call_op1("MaxUnpool", {x, i}, a);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(to_vec(y), (Doubles{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
  Attrs big = a;
  big.set("output_shape", Shape{1, 1, 5, 5});
  // The indices keep their coordinates in the default 4 x 4: the 5 x 5 output pads at the end.
  const Tensor y5 = call_op1("MaxUnpool", {x, i}, big);
  EXPECT_EQ(y5.shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(to_vec(y5), (Doubles{0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(npu_bytes_match_cpu("MaxUnpool", {x, i}, a));
}

TEST_F(MaxUnpoolTest, BadInputsNameTheProblem) {
  const Tensor x = floats({1, 2, 3, 4}, {1, 1, 2, 2});
  const Attrs a{{"kernel_shape", Shape{2, 2}}, {"strides", Shape{2, 2}}};
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("MaxUnpool", {x, ints({5, 7, 13, 16}, {1, 1, 2, 2})}, a);
                       }),
                       {"MaxUnpool", "I[3] = 16", "16 elements"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("MaxUnpool", {x, ints({5, 7}, {1, 1, 1, 2})}, a); }), {"I must be"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("MaxUnpool", {x, ints({5, 7, 13, 15}, {1, 1, 2, 2})});
                       }),
                       {"kernel_shape"}));
}
