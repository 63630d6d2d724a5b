// An opkit kernel registered as an op (custom_op.h): it runs through the dispatcher on an emulated
// NPU, its task lasts the kernel's modelled time, its golden runs on the cpu device, and a
// sanitizer finding fails the next synchronisation with the report.
#include <gtest/gtest.h>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/opkit/custom_op.h"
#include "npuscope/opkit/kernel_operator.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
namespace em = npuscope::emulator;

struct DoubleTiling {
  std::uint32_t n;
  std::uint32_t skip_enque;
};

int g_deque_line = 0;

// y = 2x on one tile of n halves (n a multiple of 16, at most 4096).
extern "C" void double_it(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA(td, tiling, DoubleTiling);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 1, td.n * sizeof(half));
  pipe.InitBuffer(out, 1, td.n * sizeof(half));
  GlobalTensor<half> xg, yg;
  xg.SetGlobalBuffer(reinterpret_cast<half*>(x), td.n);
  yg.SetGlobalBuffer(reinterpret_cast<half*>(y), td.n);
  LocalTensor<half> a = in.AllocTensor<half>();
  DataCopy(a, xg, td.n);
  if (td.skip_enque == 0) in.EnQue(a);
  g_deque_line = __LINE__ + 1;
  a = in.DeQue<half>();
  LocalTensor<half> c = out.AllocTensor<half>();
  Add(c, a, a, td.n);
  out.EnQue(c);
  in.FreeTensor(a);
  c = out.DeQue<half>();
  DataCopy(yg, c, td.n);
  out.FreeTensor(c);
}

void double_tiling(npuscope::opkit::TilingContext& ctx) {
  ctx.block_dim = 1;
  ctx.SetTiling(DoubleTiling{static_cast<std::uint32_t>(ctx.inputs[0].numel()),
                             static_cast<std::uint32_t>(ctx.attrs->get_int("skip_enque", 0))});
}

void double_golden(em::KernelContext& ctx) {
  for (std::int64_t i = 0; i < ctx.inputs[0].numel; ++i) {
    ctx.outputs[0].as<std::uint16_t>()[i] =
        em::float_to_half_bits(2 * em::half_bits_to_float(ctx.inputs[0].as<std::uint16_t>()[i]));
  }
}

}  // namespace

NPUSCOPE_OPKIT_OP(double_it, {.type = "DoubleIt", .tiling = double_tiling, .golden = double_golden});

namespace {

TEST(CustomOp, RunsOnTheNpuAndItsTaskLastsTheKernelsModelledTime) {
  em::Runtime::configure({});
  em::Device& dev = em::Runtime::get().device(0);
  const em::Tensor x = em::Tensor::uniform({256}, em::DType::kF16, em::DeviceRef::cpu(), 1, -2, 2);
  const em::Tensor xd = x.to(em::DeviceRef::npu(0));
  dev.synchronize();
  const std::uint64_t busy = dev.modelled_busy_ns();
  const em::Tensor yd = em::call_op1("DoubleIt", {xd}, {});
  dev.synchronize();
  // The kernel of opkit_timing_test's OneTileCostsWhatTheModelSays: 143 cycles (79 ns) plus the floor.
  EXPECT_EQ(dev.modelled_busy_ns() - busy, 79 + dev.spec().kernel_overhead_ns);
  const em::Tensor y = yd.to(em::DeviceRef::cpu());
  const em::Tensor golden = em::call_op1("DoubleIt", {x}, {});
  EXPECT_EQ(y.to_doubles(), golden.to_doubles());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(y.to_doubles()[i], 2 * x.to_doubles()[i]);
}

TEST(CustomOp, AFindingFailsTheNextSynchronisationWithTheReport) {
  em::Runtime::configure({});
  const em::Tensor xd = em::Tensor::uniform({256}, em::DType::kF16, em::DeviceRef::npu(0), 1, -2, 2);
  em::Attrs attrs;
  attrs.set("skip_enque", std::int64_t{1});
  try {
    (void)em::call_op1("DoubleIt", {xd}, attrs).to(em::DeviceRef::cpu());
    FAIL() << "no error";
  } catch (const em::InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ERROR: deque_without_enque in DoubleIt, block 0, DeQue at "), std::string::npos) << what;
    EXPECT_NE(what.find("custom_op_test.cpp:" + std::to_string(g_deque_line) + ":"), std::string::npos) << what;
  }
  // The device goes on.
  EXPECT_NO_THROW((void)em::call_op1("DoubleIt", {xd}, {}).to(em::DeviceRef::cpu()));
}

}  // namespace
