// The cube path (cube_ops.h): layouts through Nd2Nz, LoadData and Mmad checked against a plain
// matrix product, Mmad's accumulation and cycles, and its parameter checks.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/opkit/kernel_operator.h"
#include "npuscope/opkit/launch.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
namespace ok = npuscope::opkit;
namespace em = npuscope::emulator;

std::uint32_t r16(std::uint32_t v) { return (v + 15) / 16 * 16; }

// The cube path's buffers for C [m, n] = A [m, k] x B [k, n] of 2-byte elements, in fractals: A and B
// in L1 (A1, B1) and in L0A / L0B (A2, B2), C (f32) in L0C. Made inside a kernel.
struct CubeBuffers {
  CubeBuffers(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
    pipe.InitBuffer(a1, r16(m) * r16(k) * 2);
    pipe.InitBuffer(b1, r16(k) * r16(n) * 2);
    pipe.InitBuffer(a2, r16(m) * r16(k) * 2);
    pipe.InitBuffer(b2, r16(k) * r16(n) * 2);
    pipe.InitBuffer(co1, r16(m) * r16(n) * 4);
  }
  TPipe pipe;
  TBuf<TPosition::A1> a1;
  TBuf<TPosition::B1> b1;
  TBuf<TPosition::A2> a2;
  TBuf<TPosition::B2> b2;
  TBuf<TPosition::CO1> co1;
};

// C = A x B (+ C when accumulate) through the whole cube path, for one tile of m x n x k.
std::vector<float> cube_product(std::uint32_t m, std::uint32_t n, std::uint32_t k, const std::vector<ok::half>& a,
                                const std::vector<ok::half>& b, bool twice, ok::LaunchResult* result = nullptr) {
  std::vector<float> c(m * n);
  const ok::GmRegion gm[] = {ok::gm_input("a", a), ok::gm_input("b", b), ok::gm_output("c", c)};
  ok::LaunchOptions opts{.kernel_name = "cube", .block_dim = 1, .core = ok::CoreType::kCube};
  auto r = ok::launch_blocks(opts, gm, [&] {
    const std::uint32_t m1 = r16(m) / 16, n1 = r16(n) / 16, k1 = r16(k) / 16;
    CubeBuffers buf(m, n, k);
    GlobalTensor<half> ag, bg;
    GlobalTensor<float> cg;
    ag.SetGlobalBuffer(const_cast<half*>(a.data()), a.size());
    bg.SetGlobalBuffer(const_cast<half*>(b.data()), b.size());
    cg.SetGlobalBuffer(c.data(), c.size());
    const auto u16 = [](std::uint32_t v) { return static_cast<std::uint16_t>(v); };
    DataCopy(buf.a1.Get<half>(), ag, Nd2NzParams{1, u16(m), u16(k), 0, u16(k), u16(r16(m)), 1, 0});
    DataCopy(buf.b1.Get<half>(), bg, Nd2NzParams{1, u16(k), u16(n), 0, u16(n), u16(r16(k)), 1, 0});
    PipeBarrier<PIPE_ALL>();
    for (std::uint32_t i = 0; i < m1; ++i) {
      LoadData(buf.a2.Get<half>()[i * k1 * 256], buf.a1.Get<half>(),
               LoadData2DParams{u16(i), static_cast<std::uint8_t>(k1), u16(m1), 0, 0, false, 0});
    }
    for (std::uint32_t i = 0; i < k1; ++i) {
      LoadData(buf.b2.Get<half>()[i * n1 * 256], buf.b1.Get<half>(),
               LoadData2DParams{u16(i), static_cast<std::uint8_t>(n1), u16(k1), 0, 0, true, 0});
    }
    PipeBarrier<PIPE_ALL>();
    MmadParams p{u16(m), u16(n), u16(k)};
    Mmad(buf.co1.Get<float>(), buf.a2.Get<half>(), buf.b2.Get<half>(), p);
    if (twice) {
      p.cmatrixInitVal = false;
      Mmad(buf.co1.Get<float>(), buf.a2.Get<half>(), buf.b2.Get<half>(), p);
    }
    PipeBarrier<PIPE_ALL>();
    Fixpipe(cg, buf.co1.Get<float>(), FixpipeParams{n, m, r16(m), n});
  });
  EXPECT_TRUE(r.findings.empty()) << ok::format_finding(r.findings[0]);
  if (result != nullptr) *result = std::move(r);
  return c;
}

std::vector<ok::half> values(std::size_t n, int seed) {
  std::vector<ok::half> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = ok::half(static_cast<float>((static_cast<int>(i) * 7 + seed) % 13 - 6) / 4);
  return v;
}

TEST(OpkitCube, TheLayoutsComposeToAMatrixProduct) {
  for (auto [m, n, k] : {std::array<std::uint32_t, 3>{16, 16, 16}, {20, 30, 40}, {1, 100, 7}, {64, 33, 128}}) {
    const auto a = values(m * k, 1), b = values(k * n, 2);
    for (bool twice : {false, true}) {
      const std::vector<float> c = cube_product(m, n, k, a, b, twice);
      for (std::uint32_t i = 0; i < m; ++i) {
        for (std::uint32_t j = 0; j < n; ++j) {
          float want = 0;
          for (std::uint32_t kk = 0; kk < k; ++kk) want += float(a[i * k + kk]) * float(b[kk * n + j]);
          ASSERT_EQ(c[i * n + j], twice ? 2 * want : want) << m << "x" << n << "x" << k << " at " << i << "," << j;
        }
      }
    }
  }
}

TEST(OpkitCube, MmadCostsAFractalPerCycle) {
  ok::LaunchResult r;
  cube_product(20, 30, 40, values(20 * 40, 1), values(40 * 30, 2), false, &r);
  for (const auto& ins : r.blocks[0].instructions) {
    if (std::string(ins.name) != "Mmad") continue;
    EXPECT_EQ(ins.pipe, ok::Pipe::kCube);
    EXPECT_EQ(ins.end_cycle - ins.start_cycle, ok::kCubeStartupCycles + 2 * 2 * 3);  // 2 x 2 x 3 fractals
    return;
  }
  FAIL() << "no Mmad";
}

TEST(OpkitCube, FixpipeSaturatesToTheLargestValueOfTheOutputDtype) {
  // 16 products of 2^64 x 2^64 overflow f32 in L0C; in saturation mode a bf16 result is bf16's max.
  std::vector<ok::bfloat16_t> a(16 * 16, ok::bfloat16_t(0x1p64f)), b(16 * 16, ok::bfloat16_t(0x1p64f)), c(16 * 16);
  const ok::GmRegion gm[] = {ok::gm_input("a", a), ok::gm_input("b", b), ok::gm_output("c", c)};
  ok::LaunchOptions opts{.kernel_name = "cube",
                         .block_dim = 1,
                         .core = ok::CoreType::kCube,
                         .overflow_mode = em::OverflowMode::kSaturation};
  const ok::LaunchResult r = ok::launch_blocks(opts, gm, [&] {
    CubeBuffers buf(16, 16, 16);
    GlobalTensor<bfloat16_t> ag, bg, cg;
    ag.SetGlobalBuffer(a.data(), a.size());
    bg.SetGlobalBuffer(b.data(), b.size());
    cg.SetGlobalBuffer(c.data(), c.size());
    DataCopy(buf.a1.Get<bfloat16_t>(), ag, Nd2NzParams{1, 16, 16, 0, 16, 16, 1, 0});
    DataCopy(buf.b1.Get<bfloat16_t>(), bg, Nd2NzParams{1, 16, 16, 0, 16, 16, 1, 0});
    LoadData(buf.a2.Get<bfloat16_t>(), buf.a1.Get<bfloat16_t>(), LoadData2DParams{});
    LoadData(buf.b2.Get<bfloat16_t>(), buf.b1.Get<bfloat16_t>(), LoadData2DParams{0, 1, 1, 0, 0, true, 0});
    Mmad(buf.co1.Get<float>(), buf.a2.Get<bfloat16_t>(), buf.b2.Get<bfloat16_t>(), MmadParams{16, 16, 16});
    Fixpipe(cg, buf.co1.Get<float>(), FixpipeParams{16, 16, 16, 16});
  });
  ASSERT_TRUE(r.findings.empty()) << ok::format_finding(r.findings[0]);
  EXPECT_TRUE(r.overflow);
  EXPECT_TRUE(r.saturated);
  EXPECT_EQ(static_cast<float>(c[0]), static_cast<float>(em::dtype_max(em::DType::kBF16)));
}

TEST(OpkitCube, MmadParametersAreChecked) {
  auto run = [](MmadParams p, std::uint32_t a_offset) {
    ok::LaunchOptions opts{.kernel_name = "cube", .block_dim = 1, .core = ok::CoreType::kCube, .keep_going = true};
    return ok::launch_blocks(opts, {},
                             [&] {
                               TPipe pipe;
                               TBuf<TPosition::A2> a2;
                               TBuf<TPosition::B2> b2;
                               TBuf<TPosition::CO1> co1;
                               pipe.InitBuffer(a2, 4096);
                               pipe.InitBuffer(b2, 4096);
                               pipe.InitBuffer(co1, 4096);
                               Mmad(co1.Get<float>(), a2.Get<half>()[a_offset], b2.Get<half>(), p);
                             })
        .findings;
  };
  const auto zero = run(MmadParams{0, 16, 16}, 0);
  ASSERT_FALSE(zero.empty());
  EXPECT_EQ(zero[0].check, ok::Check::kMmadParams);
  const auto huge = run(MmadParams{4096, 16, 16}, 0);
  ASSERT_FALSE(huge.empty());
  EXPECT_EQ(huge[0].check, ok::Check::kMmadParams);
  const auto misaligned = run(MmadParams{16, 16, 16}, 8);
  ASSERT_FALSE(misaligned.empty());
  EXPECT_EQ(misaligned[0].check, ok::Check::kMmadParams);
  EXPECT_NE(misaligned[0].message.find("512-byte aligned"), std::string::npos);
  const auto too_big = run(MmadParams{64, 64, 16}, 0);  // A needs 4 fractals of 512 B: fits; C 16 KiB: not
  ASSERT_FALSE(too_big.empty());
  EXPECT_EQ(too_big[0].check, ok::Check::kMmadParams);
  const auto unwritten = run(MmadParams{16, 16, 16}, 0);
  ASSERT_EQ(unwritten.size(), 1u);
  EXPECT_EQ(unwritten[0].check, ok::Check::kUninitializedRead);
}

}  // namespace
