// A custom (opkit) kernel profiled with `npuscope run`, as a kernel author runs it: its blocks, its
// pipe timeline and its sanitizer findings in the trace (KERNEL_BLOCK, PIPE_INSTRUCTION,
// KERNEL_FINDING; Note [Kernel detail records] in hook_api.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include <unistd.h>

#include "cli_test_util.h"
#include "npuscope/collector/trace_reader.h"

using namespace npuscope::testing;
namespace collector = npuscope::collector;
namespace fs = std::filesystem;
using npuscope::Pipe;

namespace {

const std::string kSamples = std::string(NPUSCOPE_SAMPLES_DIR) + "/opkit/opkit_samples";

// This process's scratch directory (other builds may run the test at once), removed at exit.
const fs::path& scratch() {
  static const struct Dir {
    fs::path path = fs::temp_directory_path() / ("npuscope_kernel_trace_" + std::to_string(getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

struct Profiled {
  CommandResult result;
  std::unique_ptr<collector::TraceReader> reader;
  collector::TaskRow task;  // the custom kernel's task
};

Profiled profile(const std::string& name, const std::string& run_flags, const std::string& sample_args,
                 const std::string& op_type) {
  const fs::path db = scratch() / (name + ".db");
  Profiled r;
  r.result = run_command(
      npuscope_cmd("run --force -o " + db.string() + " " + run_flags + " -- " + kSamples + " " + sample_args));
  r.reader = collector::TraceReader::open(db.string());
  int found = 0;
  r.reader->for_each([&](const collector::TaskRow& t) {
    if (t.device_id >= 0 && r.reader->string(t.op_type_id) == op_type) {
      r.task = t;
      ++found;
    }
  });
  EXPECT_EQ(found, 1) << r.result.output;
  return r;
}

TEST(KernelTrace, BlocksAndPipeTimelineOfADoubleBufferedKernel) {
  // 100003 halves: 7 blocks of 4 tiles, the last with a tail copied by DataCopyPad.
  const Profiled r = profile("add", "", "--kernel add --n 100003", "AddCustom");
  ASSERT_EQ(r.result.status, 0) << r.result.output;
  const std::vector<collector::KernelBlockRow> blocks = r.reader->rows<collector::KernelBlockRow>();
  ASSERT_EQ(blocks.size(), static_cast<std::size_t>(r.task.block_dim));
  ASSERT_EQ(blocks.size(), 7u);
  std::int64_t unaligned = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const collector::KernelBlockRow& k = blocks[b];
    SCOPED_TRACE("block " + std::to_string(b));
    EXPECT_EQ(k.task_id, r.task.task_id);
    EXPECT_EQ(k.block, static_cast<std::int32_t>(b));
    EXPECT_GE(k.start_ns, r.task.start_ns);
    EXPECT_LE(k.end_ns, r.task.end_ns);
    EXPECT_GT(k.cycles, 0);
    EXPECT_GT(k.busy(Pipe::kMte2), 0);
    EXPECT_GT(k.busy(Pipe::kVector), 0);
    EXPECT_GT(k.busy(Pipe::kMte3), 0);
    EXPECT_EQ(k.busy(Pipe::kCube), 0);
    // Two buffers per queue: tile i + 1 is copied in while tile i is added.
    EXPECT_GT(k.mte2_vector_overlap_cycles, 0);
    EXPECT_EQ(k.gm_copies, 4 * 3);  // 4 tiles: x and y in, z out
    EXPECT_EQ(k.ub_capacity, 192 * 1024);
    EXPECT_EQ(k.ub_bytes, 3 * 2 * 8192);  // three queues of two 8 KiB buffers
    unaligned += k.unaligned_gm_copies;

    // The instructions add up to the block's busy cycles, pipe by pipe, and lie inside the block.
    std::map<int, std::int64_t> busy;
    std::int64_t count = 0;
    r.reader->for_each(
        [&](const collector::PipeInstructionRow& i) {
          if (i.block != k.block) return;
          ++count;
          busy[i.pipe] += i.end_cycle - i.start_cycle;
          EXPECT_LE(i.end_cycle, k.cycles);
          EXPECT_GE(i.start_ns, k.start_ns);
          EXPECT_LE(i.end_ns, k.end_ns);
          EXPECT_TRUE(r.reader->string(i.file_id).ends_with("add_custom.cpp")) << r.reader->string(i.file_id);
          EXPECT_GT(i.line, 0);
        },
        {.task_id = r.task.task_id});
    EXPECT_EQ(count, k.instructions);
    for (const Pipe p : {Pipe::kMte2, Pipe::kVector, Pipe::kMte3})
      EXPECT_EQ(busy[static_cast<int>(p)], k.busy(p)) << npuscope::enum_name(p);
  }
  EXPECT_EQ(unaligned, 3);  // the last block's tail tile of 1987 halves: x and y in, z out
  EXPECT_EQ(r.reader->count("KERNEL_FINDING"), 0);
}

TEST(KernelTrace, NoPipeTraceKeepsTheBlockSummary) {
  const Profiled r = profile("add_no_pipes", "--no-pipe-trace", "--kernel add --n 40000", "AddCustom");
  ASSERT_EQ(r.result.status, 0) << r.result.output;
  EXPECT_EQ(r.reader->count("KERNEL_BLOCK"), r.task.block_dim);
  EXPECT_EQ(r.reader->count("PIPE_INSTRUCTION"), 0);
}

TEST(KernelTrace, TheFirstFindingFailsTheKernelAndIsInTheTrace) {
  const Profiled r = profile("add_bug", "", "--kernel add --n 40000 --bug", "AddCustom");
  EXPECT_NE(r.result.status, 0) << r.result.output;
  EXPECT_NE(r.result.output.find("deque_without_enque"), std::string::npos) << r.result.output;
  EXPECT_NE(r.result.output.find("1 sanitizer finding in custom kernels"), std::string::npos) << r.result.output;
  const std::vector<collector::KernelFindingRow> findings = r.reader->rows<collector::KernelFindingRow>();
  ASSERT_EQ(findings.size(), 1u);
  const collector::KernelFindingRow& f = findings[0];
  EXPECT_EQ(f.task_id, r.task.task_id);
  EXPECT_EQ(f.check_kind, static_cast<int>(npuscope::KernelCheck::kDeQueEmpty));
  EXPECT_EQ(f.block, 0);
  EXPECT_EQ(r.reader->string(f.kernel_id), "AddCustom");
  EXPECT_EQ(r.reader->string(f.instruction_id), "DeQue");
  EXPECT_TRUE(r.reader->string(f.file_id).ends_with("add_custom.cpp"));
  EXPECT_GT(f.line, 0);
  EXPECT_FALSE(r.reader->string(f.message_id).empty());
}

TEST(KernelTrace, KeepGoingListsEveryFindingAndRunsOn) {
  const Profiled r = profile("add_bug_keep_going", "--keep-going", "--kernel add --n 40000 --bug", "AddCustom");
  const std::vector<collector::KernelFindingRow> findings = r.reader->rows<collector::KernelFindingRow>();
  // Every block meets the missing EnQue at least once per tile.
  std::map<std::int32_t, int> per_block;
  for (const auto& f : findings) per_block[f.block]++;
  EXPECT_EQ(per_block.size(), static_cast<std::size_t>(r.task.block_dim));
  EXPECT_GT(findings.size(), static_cast<std::size_t>(r.task.block_dim));
  EXPECT_NE(r.result.output.find("npuscope: sanitizer: ERROR: deque_without_enque in AddCustom"), std::string::npos)
      << r.result.output;
  // The kernel ran to its end: its blocks are in the trace.
  EXPECT_EQ(r.reader->count("KERNEL_BLOCK"), r.task.block_dim);
}

}  // namespace
