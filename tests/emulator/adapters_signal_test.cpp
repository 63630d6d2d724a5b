// DFT and STFT through the ONNX importer (adapters_signal.cpp): hand-computed transforms (forward,
// inverse, onesided, zero padding by dft_length, another axis, a complex input), STFT frames with
// and without a window, on cpu and npu:0; and the errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/adapter_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class AdaptersSignalTest : public OpTest {};

void expect_both(OneNodeModel& m, const Shape& shape, const Doubles& want) {
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const Tensor y = m.run(1, d)[0];
    EXPECT_EQ(y.shape(), shape);
    EXPECT_TRUE(all_close(to_vec(y), want, 1e-5, 1e-5));
  }
}

}  // namespace

TEST_F(AdaptersSignalTest, DftForwardInverseOnesidedAndPadded) {
  // DFT [1, 2, 3, 4] = [10, -2 + 2i, -2, -2 - 2i].
  OneNodeModel fwd("DFT", 17);
  fwd.input("x", floats({1, 2, 3, 4}, {1, 4, 1}));
  expect_both(fwd, {1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  OneNodeModel inv("DFT", 17);
  inv.input("x", floats({10, 0, -2, 2, -2, 0, -2, -2}, {1, 4, 2})).attr("inverse", std::int64_t{1});
  expect_both(inv, {1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0});
  OneNodeModel half("DFT", 17);
  half.input("x", floats({1, 2, 3, 4}, {1, 4, 1})).attr("onesided", std::int64_t{1});
  expect_both(half, {1, 3, 2}, {10, 0, -2, 2, -2, 0});
  // dft_length 2 truncates to [1, 2]: [3, -1].
  OneNodeModel cut("DFT", 17);
  cut.input("x", floats({1, 2, 3, 4}, {1, 4, 1})).ints("n", {2}, {});
  expect_both(cut, {1, 2, 2}, {3, 0, -1, 0});
  // axis 2 of [1, 2, 2, 1]: each row [a, b] -> [a + b, a - b].
  OneNodeModel rows("DFT", 17);
  rows.input("x", floats({1, 2, 5, 3}, {1, 2, 2, 1})).attr("axis", std::int64_t{2});
  expect_both(rows, {1, 2, 2, 2}, {3, 0, -1, 0, 8, 0, 2, 0});
}

TEST_F(AdaptersSignalTest, StftFramesAndWindow) {
  // Frames of 2 every 2 samples of [1, 2, 3, 4, 5]: [1, 2], [3, 4]; onesided: bins 0 and 1.
  OneNodeModel plain("STFT", 17);
  plain.input("x", floats({1, 2, 3, 4, 5}, {1, 5, 1})).ints("step", {2}, {}).empty_input().ints("len", {2}, {});
  expect_both(plain, {1, 2, 2, 2}, {3, 0, -1, 0, 7, 0, -1, 0});
  // A window [1, 0.5] scales the second sample of each frame.
  OneNodeModel win("STFT", 17);
  win.input("x", floats({1, 2, 3, 4, 5}, {1, 5, 1})).ints("step", {2}, {}).floats("w", {1, 0.5f}, {2});
  expect_both(win, {1, 2, 2, 2}, {2, 0, 0, 0, 5, 0, 1, 0});
}

TEST_F(AdaptersSignalTest, BadInputsNameTheProblem) {
  OneNodeModel rank("DFT", 17);
  rank.input("x", floats({1, 2, 3}, {1, 3}));
  EXPECT_TRUE(mentions(error_of([&] { rank.run(); }), {"DFT", "last dim of 1 (real) or 2 (complex)", "[1, 3]"}));
  OneNodeModel axis("DFT", 17);
  axis.input("x", floats({1, 2, 3}, {1, 3, 1})).attr("axis", std::int64_t{2});
  EXPECT_TRUE(mentions(error_of([&] { axis.run(); }), {"axis must name a signal dim"}));
  OneNodeModel frame("STFT", 17);
  frame.input("x", floats({1, 2, 3}, {1, 3, 1})).ints("step", {1}, {}).empty_input().ints("len", {4}, {});
  EXPECT_TRUE(mentions(error_of([&] { frame.run(); }), {"STFT", "frame_length 4", "[1, 3]"}));
}
