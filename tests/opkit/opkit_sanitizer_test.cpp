// Every sanitizer check (sanitizer.h), each with a kernel that trips it (reported with the right
// kernel, block, instruction and file:line) and the corrected kernel that does not.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "npuscope/opkit/kernel_operator.h"
#include "npuscope/opkit/launch.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
namespace ok = npuscope::opkit;

constexpr std::uint32_t kN = 256;  // halves per block
std::vector<ok::half> g_x, g_z;
int g_line = 0;  // the line of the call a test expects in its report

ok::LaunchResult run(std::uint32_t blocks, const std::function<void()>& body, bool keep_going = true) {
  g_x.assign(kN * blocks, ok::half(1.0f));
  g_z.assign(kN * blocks, ok::half(0.0f));
  ok::LaunchOptions opts{.kernel_name = "test_kernel", .block_dim = blocks, .keep_going = keep_going};
  const ok::GmRegion gm[] = {ok::gm_input("x", g_x), ok::gm_output("z", g_z)};
  return ok::launch_blocks(opts, gm, body);
}

GlobalTensor<half> gm_of(std::vector<ok::half>& v, std::uint64_t offset, std::uint64_t n) {
  GlobalTensor<half> g;
  g.SetGlobalBuffer(v.data() + offset, n);
  return g;
}

// The first finding (a skipped instruction may cause more: a copy that did not run leaves its
// destination unwritten for the next read).
void expect_one(const ok::LaunchResult& r, ok::Check check, const char* instruction, int block = 0) {
  ASSERT_FALSE(r.findings.empty());
  const ok::Finding& f = r.findings[0];
  EXPECT_EQ(f.check, check) << ok::format_finding(f);
  EXPECT_EQ(f.kernel, "test_kernel");
  EXPECT_EQ(f.block, block);
  EXPECT_EQ(f.instruction, instruction);
  if (block >= 0) {
    EXPECT_NE(f.file.find("opkit_sanitizer_test.cpp"), std::string::npos) << f.file;
    EXPECT_EQ(f.line, static_cast<std::uint32_t>(g_line)) << ok::format_finding(f);
  }
}

// A correct copy-through kernel of `n` halves per block with the pieces a test may break.
struct Plan {
  std::uint32_t copy_in = kN, tile = kN;
  std::uint32_t local_offset = 0;
  bool enque = true, free_in = true, free_twice = false;
  std::int64_t gm_offset_in = -1, gm_offset_out = -1;  // -1: the block's own slice
};

void copy_through(const Plan& p) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 1, p.tile * sizeof(half));
  pipe.InitBuffer(out, 1, p.tile * sizeof(half));
  const auto block = static_cast<std::uint64_t>(GetBlockIdx());
  auto xg = gm_of(g_x, p.gm_offset_in >= 0 ? p.gm_offset_in : block * kN, kN);
  auto zg = gm_of(g_z, p.gm_offset_out >= 0 ? p.gm_offset_out : block * kN, kN);
  LocalTensor<half> a = in.AllocTensor<half>();
  g_line = __LINE__ + 1;
  DataCopy(a[p.local_offset], xg, p.copy_in);
  if (p.enque) in.EnQue(a);
  if (!p.enque) g_line = __LINE__ + 1;
  a = in.DeQue<half>();
  LocalTensor<half> c = out.AllocTensor<half>();
  Muls(c, a, 2.0f, kN);
  out.EnQue(c);
  if (p.free_in) in.FreeTensor(a);
  if (p.free_twice) g_line = __LINE__ + 1;
  if (p.free_twice) in.FreeTensor(a);
  c = out.DeQue<half>();
  DataCopy(zg, c, kN);
  out.FreeTensor(c);
}

TEST(OpkitSanitizer, ACorrectKernelReportsNothing) {
  const ok::LaunchResult r = run(4, [] { copy_through({}); });
  EXPECT_TRUE(r.findings.empty()) << ok::format_finding(r.findings[0]);
  for (const auto& v : g_z) ASSERT_EQ(static_cast<float>(v), 2.0f);
}

TEST(OpkitSanitizer, GlobalReadOutOfRange) {
  // The last block reads one tile past the end of x (an off-by-one tail).
  const ok::LaunchResult r = run(2, [] {
    Plan p;
    if (GetBlockIdx() == 1) p.gm_offset_in = kN + 16;
    copy_through(p);
  });
  expect_one(r, ok::Check::kGmReadOutOfRange, "DataCopy", 1);
}

TEST(OpkitSanitizer, GlobalWriteOutOfRangeAndIntoAnInput) {
  const ok::LaunchResult r = run(1, [] {
    TPipe pipe;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(out, 1, kN * sizeof(half));
    LocalTensor<half> c = out.AllocTensor<half>();
    Duplicate(c, 1.0f, kN);
    out.EnQue(c);
    c = out.DeQue<half>();
    g_line = __LINE__ + 1;
    DataCopy(gm_of(g_x, 0, kN), c, kN);  // x is an input
    out.FreeTensor(c);
  });
  expect_one(r, ok::Check::kGmWriteOutOfRange, "DataCopy");
  EXPECT_EQ(static_cast<float>(g_x[0]), 1.0f);  // the copy did not run
}

TEST(OpkitSanitizer, BufferOverflowOfTheUnifiedBuffer) {
  const ok::LaunchResult r = run(1, [] {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> in;
    g_line = __LINE__ + 1;
    pipe.InitBuffer(in, 2, 100 * 1024);  // 200 KiB of a 192 KiB UB
  });
  expect_one(r, ok::Check::kBufferOverflow, "InitBuffer");
  EXPECT_NE(r.findings[0].message.find("196608"), std::string::npos) << r.findings[0].message;
  EXPECT_TRUE(run(1, [] {
                TPipe pipe;
                TQue<TPosition::VECIN, 2> in;
                pipe.InitBuffer(in, 2, 96 * 1024);  // exactly the UB
              }).findings.empty());
}

TEST(OpkitSanitizer, LocalAccessPastATensorsEnd) {
  const ok::LaunchResult r = run(1, [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 128 * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    g_line = __LINE__ + 1;
    Duplicate(t, 0.0f, 129);
  });
  expect_one(r, ok::Check::kLocalOutOfRange, "Duplicate");
}

TEST(OpkitSanitizer, MisalignedCopyLengthAndAddress) {
  Plan length;
  length.copy_in = 30;  // 60 bytes
  expect_one(run(1, [&] { copy_through(length); }), ok::Check::kMisalignedCopy, "DataCopy");
  Plan address;
  address.local_offset = 3;  // UB+6
  address.copy_in = 16;
  expect_one(run(1, [&] { copy_through(address); }), ok::Check::kMisalignedCopy, "DataCopy");
}

TEST(OpkitSanitizer, DataCopyPadHandlesAnUnalignedTail) {
  const ok::LaunchResult r = run(1, [] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    pipe.InitBuffer(in, 1, 32 * sizeof(half));
    LocalTensor<half> a = in.AllocTensor<half>();
    DataCopyPad(a, gm_of(g_x, 0, kN), DataCopyExtParams{1, 30 * sizeof(half), 0, 0, 0},
                DataCopyPadExtParams<half>{true, 0, 2, half(0.0f)});
    in.EnQue(a);
    a = in.DeQue<half>();
    Adds(a, a, 1.0f, 32);  // the padded tail was written, so all 32 may be read
    DataCopyPad(gm_of(g_z, 0, kN), a, DataCopyExtParams{1, 30 * sizeof(half), 0, 0, 0});
    in.FreeTensor(a);
  });
  EXPECT_TRUE(r.findings.empty()) << ok::format_finding(r.findings[0]);
  EXPECT_EQ(static_cast<float>(g_z[29]), 2.0f);
  EXPECT_EQ(static_cast<float>(g_z[30]), 0.0f);  // not written past the 30 elements
}

TEST(OpkitSanitizer, ReadOfLocalMemoryNothingWrote) {
  const ok::LaunchResult r = run(1, [] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, kN * sizeof(half));
    pipe.InitBuffer(out, 1, kN * sizeof(half));
    LocalTensor<half> a = in.AllocTensor<half>();
    DataCopy(a, gm_of(g_x, 0, kN), kN / 2);  // half the tile
    in.EnQue(a);
    a = in.DeQue<half>();
    LocalTensor<half> c = out.AllocTensor<half>();
    g_line = __LINE__ + 1;
    Muls(c, a, 2.0f, kN);
    out.FreeTensor(c);
    in.FreeTensor(a);
  });
  expect_one(r, ok::Check::kUninitializedRead, "Muls");
}

TEST(OpkitSanitizer, DeQueWithoutEnQue) {
  Plan p;
  p.enque = false;
  expect_one(run(1, [&] { copy_through(p); }), ok::Check::kDeQueEmpty, "DeQue");
}

TEST(OpkitSanitizer, EnQueBeyondTheDepthAndAllocBeyondTheBuffers) {
  const ok::LaunchResult full = run(1, [] {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    pipe.InitBuffer(in, 2, 64);
    LocalTensor<half> a = in.AllocTensor<half>(), b = in.AllocTensor<half>();
    Duplicate(a, 0.0f, 32);
    Duplicate(b, 0.0f, 32);
    in.EnQue(a);
    g_line = __LINE__ + 1;
    in.EnQue(b);
    in.FreeTensor(a);
    in.FreeTensor(b);
  });
  expect_one(full, ok::Check::kQueueFull, "EnQue");
  const ok::LaunchResult exhausted = run(1, [] {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> in;
    pipe.InitBuffer(in, 1, 64);
    LocalTensor<half> a = in.AllocTensor<half>();
    g_line = __LINE__ + 1;
    in.AllocTensor<half>();
    in.FreeTensor(a);
  });
  expect_one(exhausted, ok::Check::kAllocExhausted, "AllocTensor");
}

TEST(OpkitSanitizer, FreeTensorTwice) {
  Plan p;
  p.free_twice = true;
  expect_one(run(1, [&] { copy_through(p); }), ok::Check::kDoubleFree, "FreeTensor");
}

// A kernel that never frees the tensor it allocates.
void leaking_kernel() {
  TPipe pipe;
  TQue<TPosition::VECOUT, 1> out;
  pipe.InitBuffer(out, 1, 64);
  g_line = __LINE__ + 1;
  LocalTensor<half> c = out.AllocTensor<half>();
  Duplicate(c, 0.0f, 32);
}

TEST(OpkitSanitizer, ATensorStillAllocatedAtTheEnd) {
  const ok::LaunchResult r = run(1, leaking_kernel);
  expect_one(r, ok::Check::kLeak, "AllocTensor");  // reported where it was allocated
}

TEST(OpkitSanitizer, ALeakStopsTheLaunchAtTheAllocationToo) {
  try {
    run(1, leaking_kernel, /*keep_going=*/false);
    FAIL() << "no KernelFault";
  } catch (const ok::KernelFault& e) {
    ASSERT_EQ(e.findings().size(), 1u);
    EXPECT_EQ(e.findings()[0].check, ok::Check::kLeak);
    EXPECT_NE(e.findings()[0].file.find("opkit_sanitizer_test.cpp"), std::string::npos) << e.what();
    EXPECT_EQ(e.findings()[0].line, static_cast<std::uint32_t>(g_line)) << e.what();
  }
}

TEST(OpkitSanitizer, TwoBlocksWritingTheSameBytes) {
  Plan p;
  p.gm_offset_out = 0;  // every block writes the first slice
  const ok::LaunchResult r = run(2, [&] { copy_through(p); });
  expect_one(r, ok::Check::kGmWriteOverlap, "DataCopy", -1);
  EXPECT_NE(r.findings[0].message.find("blocks 0 and 1"), std::string::npos) << r.findings[0].message;
}

TEST(OpkitSanitizer, ACountOfZero) {
  const ok::LaunchResult r = run(1, [] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    g_line = __LINE__ + 1;
    Duplicate(buf.Get<half>(), 0.0f, 0);
  });
  expect_one(r, ok::Check::kBadArgument, "Duplicate");
}

TEST(OpkitSanitizer, WithoutKeepGoingTheFirstFindingStopsTheLaunch) {
  Plan p;
  p.enque = false;
  try {
    run(
        1, [&] { copy_through(p); }, /*keep_going=*/false);
    FAIL() << "no KernelFault";
  } catch (const ok::KernelFault& e) {
    ASSERT_EQ(e.findings().size(), 1u);
    EXPECT_NE(std::string(e.what()).find("ERROR: deque_without_enque in test_kernel, block 0, DeQue at "),
              std::string::npos)
        << e.what();
  }
}

TEST(OpkitSanitizer, KeepGoingListsEveryFinding) {
  Plan p;
  p.enque = false;
  p.free_twice = true;
  const ok::LaunchResult r = run(3, [&] { copy_through(p); });
  ASSERT_EQ(r.findings.size(), 6u);  // both, in each block
  EXPECT_EQ(r.findings[0].check, ok::Check::kDeQueEmpty);
  EXPECT_EQ(r.findings[1].check, ok::Check::kDoubleFree);
  EXPECT_EQ(r.findings[5].block, 2);
}

TEST(OpkitSanitizer, AnInstructionOutsideALaunchIsAnError) { EXPECT_THROW(GetBlockIdx(), ok::LaunchError); }

}  // namespace
