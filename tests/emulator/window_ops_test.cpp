// HannWindow, HammingWindow, BlackmanWindow: hand-computed periodic and symmetric windows, the
// output dtype, NPU vs CPU, and through the ONNX importer (size input, output_datatype).
#include <gtest/gtest.h>

#include <string>

#include "emulator/adapter_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using WindowTest = OpTest;

Tensor window(const char* op, std::int64_t size, std::int64_t periodic, DeviceRef d = DeviceRef::cpu()) {
  const Tensor n = ints({size}, {}).to(d);
  return call_op1(op, {n}, {{"size", size}, {"periodic", periodic}}).cpu();
}

}  // namespace

TEST_F(WindowTest, HandComputed) {
  // Periodic Hann of 4: 0.5 - 0.5 cos(2 pi n / 4) = 0, 0.5, 1, 0.5; symmetric: N = 3.
  EXPECT_TRUE(all_close(to_vec(window("HannWindow", 4, 1)), {0, 0.5, 1, 0.5}, 1e-6, 1e-7));
  EXPECT_TRUE(all_close(to_vec(window("HannWindow", 4, 0)), {0, 0.75, 0.75, 0}, 1e-6, 1e-7));
  EXPECT_TRUE(all_close(to_vec(window("HammingWindow", 2, 1)), {4.0 / 46, 1}, 1e-6, 1e-7));
  EXPECT_TRUE(all_close(to_vec(window("BlackmanWindow", 4, 1)), {0, 0.34, 1, 0.34}, 1e-6, 1e-7));
  EXPECT_EQ(window("HannWindow", 4, 1).dtype(), DType::kF32);
  EXPECT_EQ(window("HannWindow", 0, 1).shape(), (Shape{0}));
  EXPECT_TRUE(all_close(to_vec(window("BlackmanWindow", 7, 0, DeviceRef::npu())),
                        to_vec(window("BlackmanWindow", 7, 0)), 1e-6, 1e-6));
  EXPECT_TRUE(mentions(error_of([] {
                         call_op1("HannWindow", {ints({-1}, {})}, {{"size", std::int64_t{-1}}});
                       }),
                       {"HannWindow", "size must be >= 0"}));
}

TEST_F(WindowTest, OnnxSizeInputAndOutputDatatype) {
  OneNodeModel m("HammingWindow", 17);
  m.ints("n", {3}, {}).attr("output_datatype", std::int64_t{11}).attr("periodic", std::int64_t{0});
  const Tensor y = m.run()[0];
  EXPECT_EQ(y.dtype(), DType::kF64);
  EXPECT_TRUE(all_close(to_vec(y), {4.0 / 46, 1, 4.0 / 46}, 1e-12, 1e-12));
}

TEST_F(WindowTest, MelWeightMatrixTriangles) {
  // 2 mel bins up to 8 kHz at 16 kHz with dft_length 16: points at mel 0, 710, 1420, 2130 are the
  // spectrogram bins 0, 0, 1, 4: a unit spike at bin 0, then a triangle rising at 1 and falling to 4.
  OneNodeModel m("MelWeightMatrix", 17);
  m.ints("mels", {2}, {})
      .ints("dft", {16}, {})
      .ints("rate", {16000}, {})
      .floats("lo", {0}, {})
      .floats("hi", {8000}, {});
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const Tensor w = m.run(1, d)[0];
    EXPECT_EQ(w.shape(), (Shape{9, 2}));
    Doubles want(18, 0.0);
    want[0] = 1;                                        // [0, 0]
    want[3] = 1, want[5] = 2.0 / 3, want[7] = 1.0 / 3;  // [1, 1], [2, 1], [3, 1]
    EXPECT_TRUE(all_close(to_vec(w), want, 1e-6, 1e-7));
  }
  EXPECT_TRUE(mentions(
      error_of([] {
        call_op1(
            "MelWeightMatrix", {ints({2}, {})},
            {{"num_mel_bins", std::int64_t{2}}, {"dft_length", std::int64_t{16}}, {"sample_rate", std::int64_t{0}}});
      }),
      {"MelWeightMatrix", "sample_rate", ">= 1"}));
}
