// The vector instructions' numerics: computed in f32, rounded to the tensor's dtype per
// instruction, overflow per the overflow mode; Cast's rounding modes; reductions, Compare, Select.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "npuscope/emulator/float16.h"
#include "npuscope/opkit/kernel_operator.h"
#include "npuscope/opkit/launch.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
namespace ok = npuscope::opkit;
namespace em = npuscope::emulator;

ok::LaunchResult run(const std::function<void()>& body, em::OverflowMode mode = em::OverflowMode::kInfNan) {
  ok::LaunchOptions opts{.kernel_name = "vec", .block_dim = 1, .overflow_mode = mode};
  auto r = ok::launch_blocks(opts, {}, body);
  EXPECT_TRUE(r.findings.empty()) << ok::format_finding(r.findings[0]);
  return r;
}

// A UB tensor holding `values` (written with SetValue, as a kernel's scalar code would).
template <class T>
LocalTensor<T> filled(TPipe& pipe, TBuf<TPosition::VECCALC>& buf, const std::vector<float>& values) {
  pipe.InitBuffer(buf, static_cast<std::uint32_t>(values.size() * sizeof(T)));
  LocalTensor<T> t = buf.Get<T>();
  for (std::uint32_t i = 0; i < values.size(); ++i) t.SetValue(i, T(values[i]));
  return t;
}

TEST(OpkitVectorOps, HalfArithmeticRoundsOncePerInstruction) {
  std::vector<float> got;
  run([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ba, bb, bc;
    auto a = filled<half>(pipe, ba, {1.0f, 2049.0f, 0.1f, -3.0f});
    auto b = filled<half>(pipe, bb, {1e-4f, 1.0f, 0.2f, 7.0f});
    auto c = filled<half>(pipe, bc, {0, 0, 0, 0});
    Add(c, a, b, 4);
    for (std::uint32_t i = 0; i < 4; ++i) got.push_back(static_cast<float>(c.GetValue(i)));
    Div(c, a, b, 4);
    got.push_back(static_cast<float>(c.GetValue(3)));
  });
  // Each result is the f32 result rounded to f16 (2049 is not an f16: it is stored as 2048).
  const float h2049 = em::round_to_half(2049.0f);
  EXPECT_EQ(got[0], em::round_to_half(1.0f + em::round_to_half(1e-4f)));
  EXPECT_EQ(got[1], em::round_to_half(h2049 + 1.0f));
  EXPECT_EQ(got[2], em::round_to_half(em::round_to_half(0.1f) + em::round_to_half(0.2f)));
  EXPECT_EQ(got[3], 4.0f);
  EXPECT_EQ(got[4], em::round_to_half(-3.0f / 7.0f));
}

TEST(OpkitVectorOps, UnaryAndScalarForms) {
  std::vector<float> got;
  run([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ba, bc;
    auto a = filled<float>(pipe, ba, {-2.0f, 0.5f, 4.0f});
    auto c = filled<float>(pipe, bc, {0, 0, 0});
    auto read = [&] {
      for (std::uint32_t i = 0; i < 3; ++i) got.push_back(c.GetValue(i));
    };
    Exp(c, a, 3), read();
    Abs(c, a, 3), read();
    Relu(c, a, 3), read();
    Sqrt(c, c, 3), read();  // in place
    Muls(c, a, 3.0f, 3), read();
    Maxs(c, a, 1.0f, 3), read();
  });
  const std::vector<float> want = {std::exp(-2.0f),
                                   std::exp(0.5f),
                                   std::exp(4.0f),
                                   2,
                                   0.5f,
                                   4,
                                   0,
                                   0.5f,
                                   4,
                                   0,
                                   std::sqrt(0.5f),
                                   2,
                                   -6,
                                   1.5f,
                                   12,
                                   1,
                                   1,
                                   4};
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
}

TEST(OpkitVectorOps, HalfOverflowFollowsTheOverflowMode) {
  float inf_nan = 0, saturated = 0;
  const ok::LaunchResult r1 = run([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ba;
    auto a = filled<half>(pipe, ba, {60000.0f, 1.0f});
    Add(a, a, a, 2);
    inf_nan = a.GetValue(0);
  });
  EXPECT_TRUE(std::isinf(inf_nan));
  EXPECT_TRUE(r1.overflow);
  EXPECT_FALSE(r1.saturated);
  const ok::LaunchResult r2 = run(
      [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> ba;
        auto a = filled<half>(pipe, ba, {60000.0f, 1.0f});
        Add(a, a, a, 2);
        saturated = a.GetValue(0);
      },
      em::OverflowMode::kSaturation);
  EXPECT_EQ(saturated, 65504.0f);
  EXPECT_TRUE(r2.overflow);
  EXPECT_TRUE(r2.saturated);
}

TEST(OpkitVectorOps, CastRoundingModes) {
  // 1 + 2^-11 lies halfway between the f16 values 1 and 1 + 2^-10; -2.5 between -3 and -2.
  const float half_way = 1.0f + std::ldexp(1.0f, -11);
  const float above = 1.0f + 3 * std::ldexp(1.0f, -12);  // closer to 1 + 2^-10
  std::vector<float> to_half;
  std::vector<std::int32_t> to_int;
  run([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> bf, bh, bi, bn;
    auto f = filled<float>(pipe, bf, {half_way, above});
    auto h = filled<half>(pipe, bh, {0, 0});
    for (RoundMode m : {RoundMode::CAST_RINT, RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL, RoundMode::CAST_ROUND,
                        RoundMode::CAST_TRUNC, RoundMode::CAST_ODD}) {
      Cast(h, f, m, 2);
      to_half.push_back(h.GetValue(0));
      to_half.push_back(h.GetValue(1));
    }
    auto n = filled<float>(pipe, bn, {-2.5f, 2.5f, 1e10f, -1.5f});
    auto i = filled<std::int32_t>(pipe, bi, {0, 0, 0, 0});
    for (RoundMode m : {RoundMode::CAST_RINT, RoundMode::CAST_FLOOR, RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC}) {
      Cast(i, n, m, 4);
      for (std::uint32_t k = 0; k < 4; ++k) to_int.push_back(i.GetValue(k));
    }
  });
  const float up = 1.0f + std::ldexp(1.0f, -10);
  const std::vector<float> want_half = {1, up, 1, 1, up, up, up, up, 1, 1, up, up};
  EXPECT_EQ(to_half, want_half);
  const std::vector<std::int32_t> want_int = {-2, 2, 2147483647, -2, -3, 2, 2147483647, -2,
                                              -3, 3, 2147483647, -2, -2, 2, 2147483647, -1};
  EXPECT_EQ(to_int, want_int);
}

TEST(OpkitVectorOps, ReductionsCompareAndSelect) {
  float sum = 0, max = 0;
  std::vector<float> selected;
  run([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> ba, bb, bw, bd, bm, bs;
    auto a = filled<float>(pipe, ba, {1, 5, -2, 3, 0, 7, 1, 1});
    auto b = filled<float>(pipe, bb, {2, 2, 2, 2, 2, 2, 2, 2});
    pipe.InitBuffer(bw, 8 * sizeof(float));
    pipe.InitBuffer(bd, 32);
    pipe.InitBuffer(bm, 32);
    pipe.InitBuffer(bs, 8 * sizeof(float));
    ReduceSum(bd.Get<float>(), a, bw.Get<float>(), 8);
    sum = bd.Get<float>().GetValue(0);
    ReduceMax(bd.Get<float>(), a, bw.Get<float>(), 8);
    max = bd.Get<float>().GetValue(0);
    Compare(bm.Get<std::uint8_t>(), a, b, CMPMODE::GT, 8);
    Select(bs.Get<float>(), bm.Get<std::uint8_t>(), a, b, 8);
    for (std::uint32_t i = 0; i < 8; ++i) selected.push_back(bs.Get<float>().GetValue(i));
  });
  EXPECT_EQ(sum, 16.0f);
  EXPECT_EQ(max, 7.0f);
  EXPECT_EQ(selected, (std::vector<float>{2, 5, 2, 3, 2, 7, 2, 2}));  // max(a, 2)
}

TEST(OpkitVectorOps, VectorInstructionsWorkOnTheUnifiedBufferOnly) {
  ok::LaunchOptions opts{.kernel_name = "vec", .block_dim = 1, .keep_going = true};
  const ok::LaunchResult r = ok::launch_blocks(opts, {}, [] {
    TPipe pipe;
    TBuf<TPosition::A1> l1;
    pipe.InitBuffer(l1, 64);
    Duplicate(l1.Get<half>(), 1.0f, 32);
  });
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].check, ok::Check::kBadArgument);
  EXPECT_NE(r.findings[0].message.find("UB only"), std::string::npos);
}

}  // namespace
