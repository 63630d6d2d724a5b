// The pipe timing model (Note [Pipe timing], Note [Pipe costs]): hand-computed cycles for a small
// kernel, and the overlap that double buffering buys.
#include <gtest/gtest.h>

#include <vector>

#include "npuscope/opkit/kernel_operator.h"
#include "npuscope/opkit/launch.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace): as a kernel is written
namespace ok = npuscope::opkit;

// z = x + x on one tile of `n` halves: copy in, add, copy out.
void one_tile(GM_ADDR x, GM_ADDR z, std::uint32_t n) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 1, n * sizeof(half));
  pipe.InitBuffer(out, 1, n * sizeof(half));
  GlobalTensor<half> xg, zg;
  xg.SetGlobalBuffer(reinterpret_cast<half*>(x), n);
  zg.SetGlobalBuffer(reinterpret_cast<half*>(z), n);
  LocalTensor<half> a = in.AllocTensor<half>();
  DataCopy(a, xg, n);
  in.EnQue(a);
  a = in.DeQue<half>();
  LocalTensor<half> c = out.AllocTensor<half>();
  Add(c, a, a, n);
  out.EnQue(c);
  in.FreeTensor(a);
  c = out.DeQue<half>();
  DataCopy(zg, c, n);
  out.FreeTensor(c);
}

TEST(OpkitTiming, OneTileCostsWhatTheModelSays) {
  std::vector<ok::half> x(256, ok::half(1.5f)), z(256);
  ok::LaunchOptions opts{.kernel_name = "one_tile", .block_dim = 1};
  const ok::GmRegion gm[] = {ok::gm_input("x", x), ok::gm_output("z", z)};
  const ok::LaunchResult r = ok::launch(one_tile, opts, gm, reinterpret_cast<GM_ADDR>(x.data()),
                                        reinterpret_cast<GM_ADDR>(z.data()), std::uint32_t{256});
  ASSERT_TRUE(r.findings.empty());
  EXPECT_EQ(static_cast<float>(z[255]), 3.0f);
  // One core draws at most 128 B/cycle: 512 B cost 64 + 4 cycles on MTE2 and on MTE3; the add reads
  // two repeats of 256 B: 4 + 2 cycles. Issue takes a cycle each, so MTE2 runs [1, 69), Vector
  // [69, 75) after DeQue's flag, MTE3 [75, 143) after the out queue's.
  ASSERT_EQ(r.blocks.size(), 1u);
  const auto& ins = r.blocks[0].instructions;
  ASSERT_EQ(ins.size(), 3u);
  EXPECT_EQ(ins[0].pipe, ok::Pipe::kMte2);
  EXPECT_EQ(ins[0].start_cycle, 1u);
  EXPECT_EQ(ins[0].end_cycle, 69u);
  EXPECT_EQ(ins[1].pipe, ok::Pipe::kVector);
  EXPECT_STREQ(ins[1].name, "Add");
  EXPECT_EQ(ins[1].start_cycle, 69u);
  EXPECT_EQ(ins[1].end_cycle, 75u);
  EXPECT_EQ(ins[2].pipe, ok::Pipe::kMte3);
  EXPECT_EQ(ins[2].start_cycle, 75u);
  EXPECT_EQ(ins[2].end_cycle, 143u);
  EXPECT_EQ(r.cycles, 143u);
  const auto& busy = r.blocks[0].busy_cycles;
  EXPECT_EQ(busy[static_cast<int>(ok::Pipe::kMte2)], 68u);
  EXPECT_EQ(busy[static_cast<int>(ok::Pipe::kVector)], 6u);
  EXPECT_EQ(busy[static_cast<int>(ok::Pipe::kScalar)], 3u);
  // 143 cycles at 1.8 GHz is 79 ns, on top of the spec's one-core kernel floor.
  EXPECT_EQ(r.duration_ns, 79u + opts.spec.kernel_overhead_ns);
}

// z = x + y over `tiles` tiles of `tile` halves, with `buffers` buffers per queue.
struct AddArgs {
  std::uint32_t tiles, tile;
  int buffers;
};
AddArgs g_add;

void add_tiles(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  const auto [tiles, tile, buffers] = g_add;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qx, qy;
  TQue<TPosition::VECOUT, 2> qz;
  pipe.InitBuffer(qx, buffers, tile * sizeof(half));
  pipe.InitBuffer(qy, buffers, tile * sizeof(half));
  pipe.InitBuffer(qz, buffers, tile * sizeof(half));
  const std::uint32_t length = tiles * tile;
  GlobalTensor<half> xg, yg, zg;
  xg.SetGlobalBuffer(reinterpret_cast<half*>(x) + length * GetBlockIdx(), length);
  yg.SetGlobalBuffer(reinterpret_cast<half*>(y) + length * GetBlockIdx(), length);
  zg.SetGlobalBuffer(reinterpret_cast<half*>(z) + length * GetBlockIdx(), length);
  for (std::uint32_t i = 0; i < tiles; ++i) {
    LocalTensor<half> a = qx.AllocTensor<half>(), b = qy.AllocTensor<half>();
    DataCopy(a, xg[i * tile], tile);
    DataCopy(b, yg[i * tile], tile);
    qx.EnQue(a);
    qy.EnQue(b);
    a = qx.DeQue<half>();
    b = qy.DeQue<half>();
    LocalTensor<half> c = qz.AllocTensor<half>();
    Add(c, a, b, tile);
    qz.EnQue(c);
    qx.FreeTensor(a);
    qy.FreeTensor(b);
    c = qz.DeQue<half>();
    DataCopy(zg[i * tile], c, tile);
    qz.FreeTensor(c);
  }
}

// Cycles during which both pipes were busy.
std::uint64_t overlap(const std::vector<ok::InstructionRecord>& ins, ok::Pipe p, ok::Pipe q) {
  std::uint64_t total = 0;
  for (const auto& a : ins) {
    if (a.pipe != p) continue;
    for (const auto& b : ins) {
      if (b.pipe != q) continue;
      const std::uint64_t lo = std::max(a.start_cycle, b.start_cycle), hi = std::min(a.end_cycle, b.end_cycle);
      if (hi > lo) total += hi - lo;
    }
  }
  return total;
}

ok::LaunchResult run_add(int buffers) {
  g_add = {8, 2048, buffers};
  const std::size_t n = 8 * 2048 * 2;
  static std::vector<ok::half> x, y, z;
  x.assign(n, ok::half(1.0f));
  y.assign(n, ok::half(2.0f));
  z.assign(n, ok::half(0.0f));
  ok::LaunchOptions opts{.kernel_name = "add_custom", .block_dim = 2};
  const ok::GmRegion gm[] = {ok::gm_input("x", x), ok::gm_input("y", y), ok::gm_output("z", z)};
  auto r = ok::launch(add_tiles, opts, gm, reinterpret_cast<GM_ADDR>(x.data()), reinterpret_cast<GM_ADDR>(y.data()),
                      reinterpret_cast<GM_ADDR>(z.data()));
  for (const auto& v : z) EXPECT_EQ(static_cast<float>(v), 3.0f);
  return r;
}

TEST(OpkitTiming, DoubleBufferingOverlapsCopyInWithCompute) {
  const ok::LaunchResult two = run_add(2);
  const ok::LaunchResult one = run_add(1);
  ASSERT_TRUE(two.findings.empty());
  ASSERT_TRUE(one.findings.empty());
  for (int b = 0; b < 2; ++b) {
    EXPECT_GT(overlap(two.blocks[b].instructions, ok::Pipe::kMte2, ok::Pipe::kVector), 0u) << "block " << b;
    EXPECT_EQ(overlap(one.blocks[b].instructions, ok::Pipe::kMte2, ok::Pipe::kVector), 0u) << "block " << b;
  }
  EXPECT_LT(two.cycles, one.cycles);
  // The same instructions either way: only their placement in time differs.
  EXPECT_EQ(two.blocks[0].busy_cycles, one.blocks[0].busy_cycles);
}

TEST(OpkitTiming, BlocksBeyondTheCoresRunInWaves) {
  std::vector<ok::half> x(256 * 96, ok::half(1.0f)), z(256 * 96);
  auto body = [&](std::uint32_t blocks) {
    ok::LaunchOptions opts{.kernel_name = "waves", .block_dim = blocks};
    const ok::GmRegion gm[] = {ok::gm_input("x", x), ok::gm_output("z", z)};
    return ok::launch_blocks(opts, gm, [&] {
      const auto off = static_cast<std::size_t>(GetBlockIdx()) * 256;
      one_tile(reinterpret_cast<GM_ADDR>(x.data() + off), reinterpret_cast<GM_ADDR>(z.data() + off), 256);
    });
  };
  const ok::LaunchResult one_wave = body(48), two_waves = body(96);  // 910B: 48 vector cores
  EXPECT_EQ(two_waves.cycles, 2 * one_wave.cycles);
}

}  // namespace
