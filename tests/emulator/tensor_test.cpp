// Tensors (tensor.h): device names, conversions on both devices, views, host access, seeded data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/tensor.h"

using namespace npuscope::emulator;

namespace {

class TensorTest : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::configure(RuntimeOptions{.spec = "tiny"}); }
};

}  // namespace

TEST(DeviceRefTest, Parse) {
  EXPECT_EQ(DeviceRef::parse("cpu"), DeviceRef::cpu());
  EXPECT_EQ(DeviceRef::parse("npu"), DeviceRef::npu(0));
  EXPECT_EQ(DeviceRef::parse("npu:0"), DeviceRef::npu(0));
  EXPECT_EQ(DeviceRef::parse("npu:12"), DeviceRef::npu(12));
  EXPECT_EQ(DeviceRef::parse("npu:3").str(), "npu:3");
  EXPECT_EQ(DeviceRef::cpu().str(), "cpu");
  EXPECT_TRUE(DeviceRef::parse("npu:1").is_npu());
  for (const char* bad : {"gpu", "", "npu:", "npu:x", "npu:-1", "npu:1x", "npu:+1", " npu", "NPU", "cpu:0",
                          "npu:99999999999", "npu:xxxxxxxxxxxxxxxx"}) {
    EXPECT_THROW(DeviceRef::parse(bad), InvalidArgument) << '"' << bad << '"';
  }
}

TEST_F(TensorTest, FloatRoundTripOnNpuForEachDtype) {
  struct Case {
    DType dtype;
    std::vector<float> in, out;
  };
  const float sub = std::ldexp(1.0f, -24);
  const std::vector<Case> cases = {
      {DType::kF32, {1.0f / 3, -0.0f, 3e38f, 1e-40f}, {1.0f / 3, -0.0f, 3e38f, 1e-40f}},
      {DType::kF64, {1.0f / 3, -2.5f, 3e38f, 1e-40f}, {1.0f / 3, -2.5f, 3e38f, 1e-40f}},
      // f16: exact values stay; 1 + 2^-11 ties to 1; 1e5 overflows to inf.
      {DType::kF16, {65504.0f, sub, 1.0f + std::ldexp(1.0f, -11), 1e5f}, {65504.0f, sub, 1.0f, INFINITY}},
      // bf16: 1 + 2^-8 ties to 1; 1 + 3·2^-8 rounds up to 1 + 2^-6; 1e38 = 1.1755·2^126 -> 150/128·2^126.
      {DType::kBF16,
       {3.0f, 1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8), -1e38f},
       {3.0f, 1.0f, 1.0f + std::ldexp(1.0f, -6), std::ldexp(-1.0f, 126) * 1.171875f}},
      // Integers: truncation toward zero and clamping.
      {DType::kI8, {-128, 127, 2.9f, 300}, {-128, 127, 2, 127}},
      {DType::kU8, {0, 255, 7.5f, -3}, {0, 255, 7, 0}},
      {DType::kI32, {-70000, 123456, -2.9f, 0}, {-70000, 123456, -2, 0}},
      {DType::kI64, {-1e9f, 16777216, 5, -5}, {-1e9f, 16777216, 5, -5}},
      {DType::kBool, {0, 1, 2.5f, -0.0f}, {0, 1, 1, 0}},
  };
  for (const auto& c : cases) {
    const Tensor t = Tensor::from_floats(c.in, {2, 2}, c.dtype, DeviceRef::npu());
    EXPECT_TRUE(t.device().is_npu());
    EXPECT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.nbytes(), 4 * dtype_size(c.dtype));
    const std::vector<float> back = t.to_floats();
    for (std::size_t i = 0; i < c.out.size(); ++i) {
      EXPECT_EQ(back[i], c.out[i]) << dtype_name(c.dtype) << " [" << i << "]";
      EXPECT_EQ(std::signbit(back[i]), std::signbit(c.out[i])) << dtype_name(c.dtype) << " [" << i << "]";
    }
  }
  EXPECT_THROW(Tensor::from_floats(std::vector<float>{1, 2, 3}, {2, 2}, DType::kF32), InvalidArgument);
}

TEST_F(TensorTest, IntsAndBytesAreExact) {
  const std::vector<std::int64_t> big = {(1ll << 40) + 1, -(1ll << 53) - 1, 0, 9223372036854775807ll};
  const Tensor t = Tensor::from_ints(big, {4}, DType::kI64, DeviceRef::npu());
  EXPECT_EQ(t.to_ints(), big);
  const std::vector<std::int64_t> small = {-5, 0, 7};
  EXPECT_EQ(Tensor::from_ints(small, {3}, DType::kI32, DeviceRef::npu()).to_ints(), small);
  const std::vector<double> d = {0.1, 1.0 / 3.0};
  const Tensor f = Tensor::from_bytes(d.data(), {2}, DType::kF64, DeviceRef::npu());
  EXPECT_EQ(f.to_doubles(), d);
  EXPECT_EQ(Tensor::zeros({3}, DType::kF16, DeviceRef::npu()).to_floats(), (std::vector<float>{0, 0, 0}));
}

TEST_F(TensorTest, CopiesBetweenDevices) {
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const Tensor host = Tensor::from_floats(v, {2, 3}, DType::kF32);
  EXPECT_FALSE(host.device().is_npu());
  Tensor npu = host.to(DeviceRef::npu());
  Tensor copy = npu.to(DeviceRef::npu());  // D2D
  npu = Tensor();                          // the source may go before the copy has run
  EXPECT_EQ(copy.to_floats(), v);
  EXPECT_EQ(copy.cpu().to(DeviceRef::cpu()).to_floats(), v);
  const Tensor empty = Tensor::empty({0, 3}, DType::kF32, DeviceRef::npu());
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_TRUE(empty.to_floats().empty());
}

TEST_F(TensorTest, DroppingAFreshUploadIsSafe) {
  // The upload is queued; the tensor goes at once. The copy must not land in freed memory.
  const std::vector<float> v(1 << 16, 2.0f);
  for (int i = 0; i < 50; ++i) (void)Tensor::from_floats(v, {1 << 16}, DType::kF32, DeviceRef::npu());
  Runtime::get().device().synchronize();
  const Tensor kept = Tensor::from_floats(v, {1 << 16}, DType::kF32, DeviceRef::npu());
  EXPECT_EQ(kept.to_floats()[100], 2.0f);
  Runtime::get().device().synchronize();
  EXPECT_EQ(Runtime::get().device().memory().stats().allocated_bytes, 1u << 18);
}

TEST_F(TensorTest, View) {
  const Tensor t = Tensor::from_floats(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3}, DType::kF32, DeviceRef::npu());
  const Tensor v = t.view({3, -1});
  EXPECT_EQ(v.shape(), (Shape{3, 2}));
  EXPECT_EQ(v.storage(), t.storage());  // no copy
  EXPECT_EQ(v.to_floats(), t.to_floats());
  EXPECT_EQ(t.view({6}).shape(), (Shape{6}));
  EXPECT_EQ(t.view({1, 2, 3, 1}).ndim(), 4);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));  // the original is untouched
  EXPECT_THROW(t.view({4, -1}), InvalidArgument);
  EXPECT_THROW(t.view({-1, -1}), InvalidArgument);
  EXPECT_THROW(t.view({5}), InvalidArgument);
  EXPECT_THROW(t.view({-2, -3}), InvalidArgument);  // negative sizes other than -1
  const Tensor z = Tensor::empty({0, 4}, DType::kF32);
  EXPECT_EQ(z.view({4, 0}).shape(), (Shape{4, 0}));
  EXPECT_THROW(z.view({-1, 0}), InvalidArgument);  // any size would do: ambiguous
}

TEST_F(TensorTest, HostDataOnlyOnCpu) {
  const Tensor npu = Tensor::zeros({4}, DType::kF32, DeviceRef::npu());
  EXPECT_THROW(npu.data<float>(), InvalidArgument);
  EXPECT_NE(npu.raw_data(), nullptr);  // kernels and hooks still see the bytes
  const Tensor cpu = npu.cpu();
  ASSERT_NE(cpu.data<float>(), nullptr);
  cpu.data<float>()[2] = 5.0f;
  EXPECT_EQ(cpu.to_floats(), (std::vector<float>{0, 0, 5, 0}));
  EXPECT_THROW(Tensor().shape(), InvalidArgument);
  EXPECT_FALSE(Tensor().defined());
}

TEST_F(TensorTest, ShapeChecks) {
  const Tensor t = Tensor::empty({2, 3, 4}, DType::kF32);
  EXPECT_EQ(t.dim(-1), 4);
  EXPECT_EQ(t.dim(0), 2);
  EXPECT_THROW(t.dim(3), InvalidArgument);
  EXPECT_THROW(t.dim(-4), InvalidArgument);
  EXPECT_EQ(shape_str({2, 3}), "[2, 3]");
  EXPECT_THROW(Tensor::empty({2, -1}, DType::kF32), InvalidArgument);
  // Sizes whose byte count overflows are refused, not wrapped to something small.
  EXPECT_THROW(Tensor::empty({1ll << 40, 1ll << 40}, DType::kF32, DeviceRef::npu()), InvalidArgument);
  EXPECT_THROW(Tensor::empty({1ll << 62}, DType::kF32, DeviceRef::npu()), InvalidArgument);
  // Representable but larger than the device (tiny: 64 MiB).
  EXPECT_THROW(Tensor::empty({1ll << 30}, DType::kF32, DeviceRef::npu()), OutOfMemoryError);
  EXPECT_THROW(Tensor::empty({1}, DType::kF32, DeviceRef::npu(3)), InvalidArgument);  // no such device
}

TEST_F(TensorTest, RandnIsDeterministicBySeed) {
  const Tensor a = Tensor::randn({4096}, DType::kF32, DeviceRef::npu(), 42);
  const Tensor b = Tensor::randn({4096}, DType::kF32, DeviceRef::cpu(), 42);
  const Tensor c = Tensor::randn({4096}, DType::kF32, DeviceRef::npu(), 43);
  const auto va = a.to_floats(), vb = b.to_floats(), vc = c.to_floats();
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  double sum = 0, sq = 0;
  for (float x : va) {
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  const double mean = sum / 4096, var = sq / 4096 - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var, 1.0, 0.1);
  const auto wide = Tensor::randn({4096}, DType::kF32, DeviceRef::cpu(), 42, 3.0f).to_floats();
  EXPECT_FLOAT_EQ(wide[0], 3.0f * va[0]);
  // f16 storage: the same draws, rounded.
  const auto half = Tensor::randn({4096}, DType::kF16, DeviceRef::npu(), 42).to_floats();
  EXPECT_NEAR(half[10], va[10], std::fabs(va[10]) * 1e-3 + 1e-7);
  const auto u = Tensor::uniform({1000}, DType::kF32, DeviceRef::cpu(), 7, -2.0f, 3.0f).to_floats();
  for (float x : u) {
    EXPECT_GE(x, -2.0f);
    EXPECT_LT(x, 3.0f);
  }
}

TEST(MultiDevice, CopiesAndOpsOnASecondDevice) {
  Runtime::configure(RuntimeOptions{.spec = "tiny", .num_devices = 2});
  const std::vector<float> v = {1, 2, 3};
  const Tensor on1 = Tensor::from_floats(v, {3}, DType::kF32, DeviceRef::npu(1));
  EXPECT_EQ(on1.storage()->device(), &Runtime::get().device(1));
  const Tensor on0 = on1.to(DeviceRef::npu(0));  // across devices: through the host
  EXPECT_EQ(on0.storage()->device(), &Runtime::get().device(0));
  EXPECT_EQ(on0.to_floats(), v);
  EXPECT_EQ(Runtime::get().device(1).memory().stats().num_allocs, 1u);
  EXPECT_THROW(Runtime::get().device(2), InvalidArgument);
  Runtime::configure({});
}

// Sizes from user input (a model's input dims) beyond kMaxTensorBytes are a clear error before any
// allocation, not std::bad_alloc: randn used to build a vector of the whole size first.
TEST_F(TensorTest, TensorsBeyondTheSizeLimitAreRefusedBeforeAllocating) {
  const std::int64_t p40 = std::int64_t{1} << 40;
  for (const auto& make :
       std::vector<std::function<Tensor()>>{[&] {
                                              return Tensor::randn({p40, 3}, DType::kF32, DeviceRef::cpu(), 0);
                                            },
                                            [&] {
                                              return Tensor::uniform({p40, 3}, DType::kF32, DeviceRef::cpu(), 0, 0, 1);
                                            },
                                            [&] {
                                              return Tensor::empty({p40, 3}, DType::kF32);
                                            },
                                            [&] {
                                              return Tensor::zeros({p40, 3}, DType::kF32);
                                            }}) {
    try {
      make();
      ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("[1099511627776, 3]"), std::string::npos) << what;
      EXPECT_NE(what.find("13194139533312 bytes, the limit is 1099511627776 bytes"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(kMaxTensorBytes, std::uint64_t{1} << 40);
  EXPECT_THROW(check_tensor_shape({(std::int64_t{1} << 38) + 1}, DType::kF32, "x"), InvalidArgument);
  EXPECT_NO_THROW(check_tensor_shape({std::int64_t{1} << 38}, DType::kF32, "x"));  // exactly the limit
  // Zero dims count as 1, so no product of the dims of a valid shape overflows.
  EXPECT_NO_THROW(Tensor::empty({0, 1 << 20}, DType::kF32));
  EXPECT_THROW(Tensor::empty({0, p40, p40}, DType::kF32), InvalidArgument);
  // A view's element count is checked too.
  const Tensor t = Tensor::empty({0}, DType::kF32);
  EXPECT_THROW(t.view({std::int64_t{1} << 62, std::int64_t{1} << 62, 0}), InvalidArgument);
}
