// The pipe lanes of a custom kernel's task (Note [Pipe lanes]), on a small trace written here: one
// lane per pipe a block used, in the op simulator's order; block selection; cycles mapped to the
// device's ns; level of detail on instructions; the cache that reads a task's instructions once and
// keeps the last few tasks'; the timeline's flags for kernels and their findings.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "../collector/trace_test_util.h"
#include "npuscope/viewer/pipe_lanes.h"

using namespace npuscope;
using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using namespace npuscope::viewer;

namespace {

constexpr double kClockHz = 1.8e9;  // DEVICE_INFO.clock_hz of npu:0
constexpr double kNsPerCycle = 1e9 / kClockHz;

class PipeLanesTest : public TraceTest {
 protected:
  // A task (id task_id) of npu:0 stream 0 from `start_ns`, with `blocks` blocks on cores 0, 1, ...
  // all starting 100 ns into it.
  void add_kernel(std::int64_t task_id, std::int64_t start_ns, int blocks, std::int64_t cycles) {
    TaskRow t;
    t.task_id = task_id;
    t.start_ns = start_ns;
    t.end_ns = start_ns + 200 + static_cast<std::int64_t>(std::ceil(static_cast<double>(cycles) * kNsPerCycle));
    t.name_id = w().intern("GeluCustom_" + std::to_string(task_id));
    t.op_type_id = w().intern("GeluCustom");
    t.block_dim = blocks;
    tasks_.push_back(t);
    for (int b = 0; b < blocks; ++b) {
      KernelBlockRow row;
      row.task_id = task_id;
      row.block = b;
      row.core = b;
      row.start_ns = start_ns + 100;
      row.end_ns = row.start_ns + static_cast<std::int64_t>(std::llround(static_cast<double>(cycles) * kNsPerCycle));
      row.cycles = cycles;
      blocks_.push_back(row);
    }
  }
  // An instruction of block `block` of the last kernel added, at cycles [c0, c1).
  void add_instruction(int block, Pipe pipe, std::int64_t c0, std::int64_t c1, const char* name, int line = 0,
                       std::int64_t bytes = 0) {
    const KernelBlockRow& b =
        blocks_[blocks_.size() - static_cast<std::size_t>(tasks_.back().block_dim) + static_cast<std::size_t>(block)];
    PipeInstructionRow r;
    r.task_id = b.task_id;
    r.block = block;
    r.pipe = static_cast<std::int32_t>(pipe);
    r.start_cycle = c0;
    r.end_cycle = c1;
    r.start_ns = b.start_ns + std::llround(static_cast<double>(c0) * kNsPerCycle);
    r.end_ns = b.start_ns + std::llround(static_cast<double>(c1) * kNsPerCycle);
    r.bytes = bytes;
    r.name_id = w().intern(name);
    r.file_id = w().intern("samples/opkit/gelu_custom.cpp");
    r.line = line;
    instructions_.push_back(r);
  }
  void finish() {
    DeviceInfoRow d;
    d.device_id = 0;
    d.name = "ascend910b";
    d.clock_hz = kClockHz;
    w().add(d);
    w().add(tasks_);
    w().add(blocks_);
    w().add(instructions_);
    w().add(findings_);
    w().finalize();
    w_.reset();
    trace_ = TraceReader::open(path());
    model_.emplace(*trace_);
  }
  TaskPipes load(std::int64_t task_id) {
    return load_task_pipes(*trace_, task_id, model_->kernels().blocks_of(task_id), model_->kernels().clock_hz(0));
  }
  static std::vector<std::string> titles(const BlockPipes& b) {
    std::vector<std::string> t;
    for (const Lane& lane : b.lanes) t.push_back(lane.title);
    return t;
  }

  TraceWriter& w() {  // created on first use: the fixture's directory exists from SetUp on
    if (!w_) w_ = TraceWriter::create(path());
    return *w_;
  }

  std::unique_ptr<TraceWriter> w_;
  std::vector<TaskRow> tasks_;
  std::vector<KernelBlockRow> blocks_;
  std::vector<PipeInstructionRow> instructions_;
  std::vector<KernelFindingRow> findings_;
  std::unique_ptr<TraceReader> trace_;
  std::optional<TimelineModel> model_;
};

TEST(PipeLaneOrder, IsTheOpSimulatorsAndListsEveryPipeOnce) {
  std::vector<std::string> names;
  for (const Pipe p : kPipeLaneOrder) names.emplace_back(enum_name(p));
  EXPECT_EQ(names, (std::vector<std::string>{"MTE2", "VECTOR", "MTE3", "CUBE", "MTE1", "FIXP", "SCALAR"}));
  EXPECT_TRUE(lists_each_pipe_once(kPipeLaneOrder));
  std::array<Pipe, kNumPipes> twice = kPipeLaneOrder;
  twice[1] = Pipe::kMte2;
  EXPECT_FALSE(lists_each_pipe_once(twice));
}

TEST_F(PipeLanesTest, OneLanePerUsedPipeInTheSimulatorsOrder) {
  add_kernel(1, 10'000, 2, 200);
  // Block 0: a vector kernel, written out of lane order; block 1: the cube path and every other pipe.
  add_instruction(0, Pipe::kScalar, 0, 1, "DataCopy");
  add_instruction(0, Pipe::kMte3, 75, 143, "DataCopy", 80, 512);
  add_instruction(0, Pipe::kVector, 69, 75, "Add", 70, 1024);
  add_instruction(0, Pipe::kMte2, 1, 69, "DataCopy", 60, 512);
  add_instruction(0, Pipe::kScalar, 1, 2, "Add");
  for (const Pipe p : {Pipe::kFix, Pipe::kScalar, Pipe::kMte1, Pipe::kCube, Pipe::kMte3, Pipe::kVector, Pipe::kMte2})
    add_instruction(1, p, 10, 20, "Mmad");
  finish();

  const TaskPipes pipes = load(1);
  EXPECT_TRUE(pipes.error.empty()) << pipes.error;
  ASSERT_EQ(pipes.blocks.size(), 2u);
  EXPECT_EQ(pipes.instructions, 12u);
  EXPECT_EQ(pipes.not_shown, 0u);
  const BlockPipes& b0 = pipes.blocks[0];
  EXPECT_EQ(titles(b0), (std::vector<std::string>{"MTE2", "VECTOR", "MTE3", "SCALAR"})) << "only the pipes used";
  EXPECT_EQ(titles(pipes.blocks[1]),
            (std::vector<std::string>{"MTE2", "VECTOR", "MTE3", "CUBE", "MTE1", "FIXP", "SCALAR"}));
  for (const Lane& lane : b0.lanes) {
    EXPECT_EQ(lane.kind, LaneKind::kPipe);
    ASSERT_EQ(lane.rows.size(), 1u) << lane.title;
    for (const TimelineItem& item : lane.rows[0]) EXPECT_EQ(enum_name(pipe_of(item)), lane.title);
  }
  // Items count cycles from the block's start; their details keep the row's ns, bytes and source.
  const TimelineItem& add = b0.lanes[1].rows[0][0];
  EXPECT_EQ(model_->str(add.label_id), "Add");
  EXPECT_EQ(add.start_ns, 69);
  EXPECT_EQ(add.end_ns(), 75);
  const InstructionDetail& d = b0.detail(add);
  EXPECT_EQ(d.bytes, 1024);
  EXPECT_EQ(d.line, 70);
  EXPECT_EQ(model_->str(d.file_id), "samples/opkit/gelu_custom.cpp");
  EXPECT_EQ(d.start_ns, 10'100 + std::llround(69 * kNsPerCycle));
  const Lane& scalar = b0.lanes[3];
  ASSERT_EQ(scalar.rows[0].size(), 2u);
  EXPECT_EQ(scalar.rows[0][0].end_ns(), 1) << "a 1-cycle instruction keeps its cycle";
}

TEST_F(PipeLanesTest, BlocksAreFoundByIndexAndCyclesMapToTheDevicesNs) {
  add_kernel(7, 50'000, 3, 1000);
  for (int b = 0; b < 3; ++b) add_instruction(b, Pipe::kVector, 10 * b, 10 * b + 500, "Exp");
  // An instruction of a block without a KERNEL_BLOCK row (block 5): counted, not drawn.
  PipeInstructionRow orphan = instructions_.back();
  orphan.block = 5;
  instructions_.push_back(orphan);
  finish();

  const TaskPipes pipes = load(7);
  EXPECT_EQ(pipes.instructions, 3u);
  EXPECT_EQ(pipes.not_shown, 1u);
  ASSERT_NE(pipes.block(2), nullptr);
  EXPECT_EQ(pipes.block(2)->block.core, 2);
  EXPECT_EQ(pipes.block(2)->lanes[0].rows[0][0].start_ns, 20);
  EXPECT_EQ(pipes.block(3), nullptr);
  EXPECT_EQ(pipes.block(-1), nullptr);

  const BlockPipes& b = *pipes.block(1);
  EXPECT_DOUBLE_EQ(b.ns_per_cycle, kNsPerCycle) << "from DEVICE_INFO.clock_hz";
  const TimelineItem& exp = b.lanes[0].rows[0][0];
  EXPECT_NEAR(b.ns_at(static_cast<double>(exp.start_ns)), static_cast<double>(b.detail(exp).start_ns), 0.5);
  EXPECT_NEAR(b.ns_at(static_cast<double>(exp.end_ns())), static_cast<double>(b.detail(exp).end_ns), 0.5);
  // The block's own time span, in cycles: [0, its cycles] (give or take the rounding of its ns).
  const ViewRange v = b.cycle_view({b.block.start_ns, b.block.end_ns, 800});
  EXPECT_EQ(v.start_ns, 0);
  EXPECT_NEAR(static_cast<double>(v.end_ns), 1000, 2);
  EXPECT_EQ(v.width_px, 800);
  // Without a clock the block's ns span over its cycles gives the rate.
  const TaskPipes unclocked = load_task_pipes(*trace_, 7, model_->kernels().blocks_of(7), 0);
  EXPECT_NEAR(unclocked.block(0)->ns_per_cycle, kNsPerCycle, 1e-3);
}

TEST_F(PipeLanesTest, InstructionsFoldWhenZoomedOutAndShowOneByOneZoomedIn) {
  constexpr int kCount = 10'000;
  add_kernel(3, 1'000'000, 1, 5 * kCount);
  for (int i = 0; i < kCount; ++i) add_instruction(0, Pipe::kVector, 5 * i, 5 * i + 4, "Mul");
  finish();

  const TaskPipes pipes = load(3);
  const BlockPipes& b = *pipes.block(0);
  ASSERT_EQ(b.lanes.size(), 1u);
  const auto& row = b.lanes[0].rows[0];
  ASSERT_EQ(row.size(), static_cast<std::size_t>(kCount));
  // The whole block over 1000 px: ~28 ns of instructions per pixel fold into a few hundred runs.
  std::vector<DrawItem> out;
  visible_items(row, b.cycle_view({b.block.start_ns, b.block.end_ns, 1000}), out);
  EXPECT_LE(out.size(), 1000 / 3 + 2);
  std::size_t total = 0;
  for (const DrawItem& d : out) total += d.count;
  EXPECT_EQ(total, static_cast<std::size_t>(kCount)) << "every instruction in exactly one draw item";
  // 40 ns at 1000 px: each 4-cycle (2.2 ns) instruction is 55 px wide, drawn on its own; the first
  // is the one under the view's start (cycles 1800-1804: 1000-1002.2 ns into the block).
  out.clear();
  const std::int64_t at = b.block.start_ns + 1001;
  visible_items(row, b.cycle_view({at, at + 40, 1000}), out);
  ASSERT_GE(out.size(), 13u);
  EXPECT_LE(out.size(), 15u);
  for (const DrawItem& d : out) EXPECT_EQ(d.count, 1u);
  EXPECT_LE(b.ns_at(static_cast<double>(out.front().start_ns)), static_cast<double>(at));
  EXPECT_GT(b.ns_at(static_cast<double>(out.front().end_ns)), static_cast<double>(at));
}

TEST_F(PipeLanesTest, TheTimelineFlagsKernelsAndTheirFindings) {
  add_kernel(1, 10'000, 2, 100);
  add_kernel(2, 20'000, 1, 100);
  TaskRow plain = tasks_.back();  // an ordinary op
  plain.task_id = 3;
  plain.start_ns = 30'000;
  plain.end_ns = 31'000;
  tasks_.push_back(plain);
  KernelFindingRow f;
  f.task_id = 2;
  f.check_kind = static_cast<std::int32_t>(KernelCheck::kLeak);
  f.block = 0;
  f.message_id = w().intern("a tensor still allocated");
  findings_.push_back(f);
  finish();

  const auto& row = model_->lanes()[0].rows[0];
  ASSERT_EQ(row.size(), 3u);
  EXPECT_EQ(row[0].flags & (kKernel | kKernelFinding), kKernel);
  EXPECT_EQ(row[1].flags & (kKernel | kKernelFinding), kKernel | kKernelFinding);
  EXPECT_EQ(row[2].flags & (kKernel | kKernelFinding), 0u);
  EXPECT_EQ(model_->kernels().blocks_of(1).size(), 2u);
  EXPECT_TRUE(model_->kernels().blocks_of(3).empty());
  ASSERT_EQ(model_->kernels().findings_of(2).size(), 1u);
  EXPECT_EQ(model_->str(model_->kernels().findings_of(2)[0].message_id), "a tensor still allocated");
  EXPECT_EQ(model_->kernels().clock_hz(0), kClockHz);
  EXPECT_EQ(model_->kernels().clock_hz(9), 0);
}

TEST_F(PipeLanesTest, TheCacheReadsATaskOnceAndKeepsTheLastOnes) {
  constexpr int kTasks = static_cast<int>(PipeCache::kCachedTasks) + 4;
  for (int t = 1; t <= kTasks; ++t) {
    add_kernel(t, 10'000 * t, 1, 100);
    add_instruction(0, Pipe::kMte2, 0, 50, "DataCopy");
  }
  TaskRow plain = tasks_.back();
  plain.task_id = 100;
  plain.start_ns = 10'000 * (kTasks + 1);
  plain.end_ns = plain.start_ns + 100;
  tasks_.push_back(plain);
  finish();

  PipeCache cache(*model_);
  EXPECT_EQ(cache.get(100, 0, true), nullptr) << "not a custom kernel";
  EXPECT_EQ(cache.loads(), 0u);
  // Asked for without waiting: read on a thread of its own, there a little later.
  std::shared_ptr<const TaskPipes> first = cache.get(1, 0);
  for (int i = 0; i < 500 && !first; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    first = cache.get(1, 0);
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->task_id, 1);
  EXPECT_EQ(first->instructions, 1u);
  EXPECT_EQ(cache.get(1, 0, true), first) << "kept: not read again";
  EXPECT_EQ(cache.loads(), 1u);
  for (int t = 2; t <= kTasks; ++t) ASSERT_NE(cache.get(t, 0, true), nullptr);
  EXPECT_EQ(cache.loads(), static_cast<std::size_t>(kTasks));
  EXPECT_LE(cache.cached(), PipeCache::kCachedTasks);
  ASSERT_NE(cache.get(kTasks, 0, true), nullptr);
  EXPECT_EQ(cache.loads(), static_cast<std::size_t>(kTasks)) << "the last task is still there";
  ASSERT_NE(cache.get(1, 0, true), nullptr);
  EXPECT_EQ(cache.loads(), static_cast<std::size_t>(kTasks) + 1) << "the first was let go, and is read again";
  EXPECT_EQ(first->instructions, 1u) << "what a caller holds outlives its eviction";
}

}  // namespace
