// HardtanhGrad, HardswishGrad, HardsigmoidGrad: values from PyTorch 1.13 CPU (the branch points
// included), NPU vs CPU in f16, an in-place run and bad inputs.
#include <gtest/gtest.h>

#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class BoundedActivationGradTest : public OpTest {};

const std::vector<float> kX{-4, -3, -1, 0, 0.3f, 1, 3, 6, 7};
const std::vector<float> kDy{1, -2, 0.5f, 1, 3, -1, 0.25f, 2, -1.5f};
Tensor t9(const std::vector<float>& v, DType dt = DType::kF32) { return floats(v, {9}, dt); }

// torch.ops.aten.*_backward on float64 tensors.
const Doubles kHardtanh06{0, 0, 0, 0, 3, -1, 0.25, 0, 0};
const Doubles kHardswish{0, 1, 0.08333333333333334, 0.5, 1.8, -0.8333333333333333, 0.25, 2, -1.5};
const Doubles kHardsigmoid{0, 0, 0.08333333333333333, 0.16666666666666666, 0.5, -0.16666666666666666, 0, 0, 0};

void expect_both(const char* op, const Attrs& attrs, const Doubles& want) {
  const BothBackends r = run_both(op, {t9(kDy), t9(kX)}, attrs);
  EXPECT_TRUE(all_close(to_vec(r.cpu[0]), want, 1e-7, 1e-7)) << op << " cpu";
  EXPECT_TRUE(all_close(to_vec(r.npu[0]), want, 1e-6, 1e-7)) << op << " npu";
}

}  // namespace

TEST_F(BoundedActivationGradTest, ValuesMatchPyTorchAtTheBranchPoints) {
  expect_both("HardtanhGrad", {{"min_val", 0.0}, {"max_val", 6.0}}, kHardtanh06);
  expect_both("HardswishGrad", {}, kHardswish);
  expect_both("HardsigmoidGrad", {}, kHardsigmoid);
}

TEST_F(BoundedActivationGradTest, NpuF16MatchesCpu) {
  for (const char* op : {"HardtanhGrad", "HardswishGrad", "HardsigmoidGrad"}) {
    EXPECT_TRUE(npu_close_to_cpu(op, {t9(kDy, DType::kF16), t9(kX, DType::kF16)}, {}, 2e-3, 1e-3)) << op;
  }
}

TEST_F(BoundedActivationGradTest, GradientMayOverwriteDy) {
  const Tensor dy = t9(kDy).to(DeviceRef::npu()), x = t9(kX).to(DeviceRef::npu());
  const Tensor out = dy;  // the same memory as input 0
  call_op("HardswishGrad", {dy, x}, {}, {.outputs = std::span<const Tensor>(&out, 1)});
  EXPECT_TRUE(all_close(to_vec(dy), kHardswish, 1e-6, 1e-7));
}

TEST_F(BoundedActivationGradTest, BadInputsNameTheOp) {
  EXPECT_THROW(call_op("HardtanhGrad", {t9(kDy), floats({1, 2}, {2})}), InvalidArgument);
  EXPECT_THROW(call_op("HardswishGrad", {t9(kDy), ints({1, 2, 3, 4, 5, 6, 7, 8, 9}, {9})}), InvalidArgument);
  try {
    call_op("HardtanhGrad", {t9(kDy), t9(kX)}, {{"min_val", 2.0}, {"max_val", 1.0}});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("HardtanhGrad"), std::string::npos) << e.what();
  }
}
