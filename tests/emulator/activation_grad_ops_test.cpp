// GeluV2, GeluGrad, SiluGrad, SigmoidGrad, TanhGrad, DropoutDoMask: values from PyTorch 1.13 CPU,
// NPU vs CPU in f32/f16, in-place runs and bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emulator/alias_test_util.h"
#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class ActivationGradTest : public OpTest {};

const std::vector<float> kA{-3.0f, -1.0f, -0.5f, 0.0f, 0.3f, 1.0f, 2.5f};
const std::vector<float> kD{1.0f, -2.0f, 0.5f, 1.0f, 3.0f, -1.0f, 0.25f};
Tensor t7(const std::vector<float>& v, DType dt = DType::kF32) { return floats(v, {7}, dt); }
const Attrs kTanh{{"approximate", std::string("tanh")}};

// PyTorch 1.13 CPU in float64.
const Doubles kGeluNone{-0.004049694095, -0.1586552539, -0.1542687694, 0, 0.1853734267, 0.8413447461, 2.484475837};
const Doubles kGeluTanh{-0.003637392082, -0.1588080094, -0.1542859902, 0, 0.1853709235, 0.8411919906, 2.484915734};
const Doubles kGeluGradNone{-0.0119456472, 0.1666309412, 0.06625243767, 0.5, 2.1969833, -1.083315471, 0.2594027715};
const Doubles kGeluGradTanh{-0.01158416663, 0.1659281677, 0.06631504823, 0.5, 2.196886355, -1.082964084, 0.2594878941};
const Doubles kSiluGrad{-0.08810410602, -0.1446589763, 0.1300194063, 0.5, 1.943340031, -0.9276705119, 0.2748502778};
const std::vector<float> kSig{0.04742587318f, 0.2689414214f, 0.3775406688f, 0.5f,
                              0.5744425168f,  0.7310585786f, 0.92414182f};
const Doubles kSigGrad{0.04517665973, -0.3932238665, 0.1175018561, 0.25, 0.7333749351, -0.1966119332, 0.01752592914};
const std::vector<float> kTanhY{-0.9950547537f, -0.761594156f, -0.4621171573f, 0,
                                0.2913126125f,  0.761594156f,  0.9866142982f};
const Doubles kTanhGrad{0.009866037165, -0.8399486832, 0.3932238665, 1, 2.745410885, -0.4199743416, 0.006648056671};

void expect_both(const char* op, const std::vector<Tensor>& in, const Attrs& attrs, const Doubles& want) {
  const BothBackends r = run_both(op, in, attrs);
  EXPECT_TRUE(all_close(to_vec(r.cpu[0]), want, 1e-6, 1e-7)) << op << " cpu";
  EXPECT_TRUE(all_close(to_vec(r.npu[0]), want, 2e-6, 1e-6)) << op << " npu";
}

}  // namespace

TEST_F(ActivationGradTest, ValuesMatchPyTorch) {
  const Tensor a = t7(kA), d = t7(kD);
  expect_both("GeluV2", {a}, {}, kGeluNone);  // the erf form on the NPU too
  expect_both("GeluV2", {a}, kTanh, kGeluTanh);
  expect_both("GeluGrad", {d, a}, {}, kGeluGradNone);
  expect_both("GeluGrad", {d, a}, kTanh, kGeluGradTanh);
  expect_both("SiluGrad", {d, a}, {}, kSiluGrad);
  expect_both("SigmoidGrad", {d, t7(kSig)}, {}, kSigGrad);
  expect_both("TanhGrad", {d, t7(kTanhY)}, {}, kTanhGrad);
}

TEST_F(ActivationGradTest, DropoutDoMaskScalesKeptElements) {
  const Tensor x = floats({1, -2, 3, NAN}, {4});
  const Tensor mask = ints({1, 0, 1, 0}, {4}, DType::kBool);
  const BothBackends r = run_both("DropoutDoMask", {x, mask}, {{"scale", 2.0}});
  for (const Tensor& y : {r.cpu[0], r.npu[0]}) {
    const Doubles v = to_vec(y);
    EXPECT_EQ(v[0], 2);
    EXPECT_EQ(v[1], 0);
    EXPECT_EQ(v[2], 6);
    EXPECT_TRUE(std::isnan(v[3]));  // NaN · 0, as aten's x * mask * scale
  }
}

TEST_F(ActivationGradTest, NpuMatchesCpuInF32AndF16) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor x = Tensor::randn({7, 45}, dt, DeviceRef::cpu(), 1, 2.0f);
    const Tensor dy = Tensor::randn({7, 45}, dt, DeviceRef::cpu(), 2);
    const Tensor y = Tensor::uniform({7, 45}, dt, DeviceRef::cpu(), 3, -0.99f, 0.99f);
    const Tolerance tol = default_tolerance(dt);
    for (const Attrs& a : {Attrs{}, kTanh}) {
      EXPECT_TRUE(npu_close_to_cpu("GeluV2", {x}, a, tol.rtol, tol.atol));
      EXPECT_TRUE(npu_close_to_cpu("GeluGrad", {dy, x}, a, tol.rtol, tol.atol));
    }
    EXPECT_TRUE(npu_close_to_cpu("SiluGrad", {dy, x}, {}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("SigmoidGrad", {dy, y}, {}, tol.rtol, tol.atol));
    EXPECT_TRUE(npu_close_to_cpu("TanhGrad", {dy, y}, {}, tol.rtol, tol.atol));
    const Tensor mask = Tensor::uniform({7, 45}, DType::kF32, DeviceRef::cpu(), 4, 0, 1);
    const Tensor keep = call_op1("Greater", {mask, floats({0.3f}, {1})});
    EXPECT_TRUE(npu_close_to_cpu("DropoutDoMask", {x, keep}, {{"scale", 1 / 0.7}}, tol.rtol, tol.atol));
  }
}

TEST_F(ActivationGradTest, InPlaceMatchesOutOfPlace) {
  const Tensor x = Tensor::randn({3, 17}, DType::kF32, DeviceRef::cpu(), 1);
  const Tensor dy = Tensor::randn({3, 17}, DType::kF32, DeviceRef::cpu(), 2);
  const Tensor keep = Tensor::from_ints(I64s(51, 1), {3, 17}, DType::kBool);
  struct Case {
    const char* op;
    std::vector<Tensor> in;
    Attrs attrs;
  };
  const std::vector<Case> cases{{"GeluV2", {x}, {}},       {"GeluGrad", {dy, x}, kTanh},
                                {"SiluGrad", {dy, x}, {}}, {"SigmoidGrad", {dy, x}, {}},
                                {"TanhGrad", {dy, x}, {}}, {"DropoutDoMask", {x, keep}, {{"scale", 2.0}}}};
  for (const Case& c : cases) {
    const Doubles want = to_vec(call_op1(c.op, c.in, c.attrs));
    EXPECT_EQ(to_vec(run_in_place(c.op, c.in, c.attrs, Backend::kCpu)), want) << c.op;
    if (c.in.size() > 1 && c.in[1].dtype() != DType::kBool) {
      EXPECT_EQ(to_vec(run_in_place(c.op, c.in, c.attrs, Backend::kCpu, 1)), want) << c.op << " over input 1";
    }
  }
}

TEST_F(ActivationGradTest, BadInputsNameTheOp) {
  const Tensor a = t7(kA);
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("GeluV2", {a}, {{"approximate", std::string("erf")}});
                       }),
                       {"GeluV2", "approximate", "erf"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("GeluGrad", {a, floats({1, 2}, {2})}); }), {"GeluGrad", "[7]", "[2]"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("SiluGrad", {ints({1}, {1}), a}); }), {"SiluGrad"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("DropoutDoMask", {a, a}); }), {"DropoutDoMask", "mask", "bool"}));
}
