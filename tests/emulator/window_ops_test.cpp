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
