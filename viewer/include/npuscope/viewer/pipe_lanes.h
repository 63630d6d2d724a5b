// The pipe lanes of a custom (opkit) kernel's task: for one of its blocks, a lane per pipe that ran
// instructions, drawn under the task's stream while the task is selected.
//
// Note [Pipe lanes]
// A custom kernel's task has a KERNEL_BLOCK row per block and a PIPE_INSTRUCTION row per instruction
// (Note [Kernel detail records] in runtime_hooks/hook_api.h). Blocks and findings are few and are
// read with the timeline (KernelIndex). Instructions are many: they are read for one task when it
// is selected, on a thread of their own, through PIPE_INSTRUCTION's task index, and the tasks
// selected last are kept (PipeCache). The viewer never holds the instructions of every kernel.
//
// The lanes follow the op simulator's order (kPipeLaneOrder): data in (MTE2), compute (VECTOR), data
// out (MTE3), then the cube path (CUBE, MTE1, FIXP) and SCALAR last. Only the pipes the block used
// get a lane. One block at a time: the blocks of a launch run the same code on other cores, and 48
// blocks of 4 lanes each would bury the timeline. The details panel picks the block (default 0).
//
// A lane's items count core cycles from the block's start, not ns. An instruction takes a few
// cycles (0.56 ns each at 1.8 GHz), and whole-ns times would draw a 1-cycle instruction as 0 or 1 ns
// wide, off by up to half a cycle. To draw, the view is turned into cycles (cycle_view). Then
// visible_items folds instructions narrower than 3 px as it folds tasks (Note [Level of detail]).
// Cycles go back to ns through the block's start and the device's clock (ns_at).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "npuscope/viewer/lod.h"
#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

inline constexpr std::array<Pipe, kNumPipes> kPipeLaneOrder = {Pipe::kMte2, Pipe::kVector, Pipe::kMte3,  Pipe::kCube,
                                                               Pipe::kMte1, Pipe::kFix,    Pipe::kScalar};

constexpr bool lists_each_pipe_once(const std::array<Pipe, kNumPipes>& order) {
  for (const auto& v : enum_values<Pipe>()) {
    int seen = 0;
    for (const Pipe p : order) seen += p == v.value;
    if (seen != 1) return false;
  }
  return true;
}
static_assert(lists_each_pipe_once(kPipeLaneOrder), "kPipeLaneOrder must list every Pipe once");

// An instruction item's pipe: flags bits 8-15.
inline constexpr int kPipeShift = 8;
inline Pipe pipe_of(const TimelineItem& item) { return static_cast<Pipe>((item.flags >> kPipeShift) & 0xff); }

// What an instruction's tooltip shows beyond its item. An item's id indexes its block's details.
struct InstructionDetail {
  std::int64_t start_ns = 0, end_ns = 0;  // PIPE_INSTRUCTION's device times
  std::int64_t bytes = 0;
  std::int32_t file_id = 0, line = 0;  // file: STRING_IDS id
};

// One block's lanes.
struct BlockPipes {
  collector::KernelBlockRow block;
  // Kind kPipe, titled by the pipe ("MTE2"), in kPipeLaneOrder, only pipes with instructions. Items
  // in cycles from the block's start (label: the instruction's name, flags: its pipe). One row,
  // unless the trace has instructions of one pipe that overlap: then as many as keep each row's
  // items apart.
  std::vector<Lane> lanes;
  std::vector<InstructionDetail> details;
  double ns_per_cycle = 1;

  // The device time of a cycle of this block (ns, fractional).
  double ns_at(double cycle) const { return static_cast<double>(block.start_ns) + cycle * ns_per_cycle; }
  // A view (ns) in this block's cycles, over the same pixels, for visible_items.
  ViewRange cycle_view(const ViewRange& ns_view) const;
  const InstructionDetail& detail(const TimelineItem& item) const { return details[item.id]; }
};

// A task's instructions, block by block.
struct TaskPipes {
  std::int64_t task_id = 0;
  std::vector<BlockPipes> blocks;  // one per KERNEL_BLOCK row, by block index
  std::size_t instructions = 0;    // shown in lanes
  std::size_t not_shown = 0;       // of blocks without a KERNEL_BLOCK row, or of unknown pipes
  std::string error;               // the trace could not be read (TraceError's message)

  // The block with this index; null if none.
  const BlockPipes* block(std::int32_t index) const;
  std::size_t memory_bytes() const;
};

// Reads the task's PIPE_INSTRUCTION rows into lanes. `blocks` are its KERNEL_BLOCK rows; `clock_hz`
// its device's clock (0 if unknown: then each block's own ns span over its cycles). Throws what the
// reader throws. `cancel`: checked every 64Ki rows (the load then ends early, its result unused).
TaskPipes load_task_pipes(const collector::TraceReader& trace, std::int64_t task_id,
                          std::span<const collector::KernelBlockRow> blocks, double clock_hz,
                          const std::atomic<bool>* cancel = nullptr);

// The pipe lanes of the tasks selected last (Note [Pipe lanes]): a task's are read on a thread of
// their own when first asked for, then kept while it is among the last kCachedTasks tasks asked for
// and the cache holds at most kCachedInstructions (the newest is kept whatever its size). Owned by
// the UI thread; the loads read through the shared reader, which allows it.
class PipeCache {
 public:
  static constexpr std::size_t kCachedTasks = 8;
  static constexpr std::size_t kCachedInstructions = 4'000'000;  // ~56 bytes each

  explicit PipeCache(const TimelineModel& model) : model_(model) {}
  ~PipeCache();
  PipeCache(const PipeCache&) = delete;
  PipeCache& operator=(const PipeCache&) = delete;

  // The lanes of a task of the model (its device gives the clock); null while they are read (this
  // call starts it), or when the task is not a custom kernel. With `wait` (a screenshot) the read
  // is waited for. A failed read gives lanes with `error` set.
  std::shared_ptr<const TaskPipes> get(std::int64_t task_id, std::int32_t device_id, bool wait = false);
  std::size_t loads() const { return loads_; }  // reads started so far
  std::size_t cached() const { return entries_.size(); }

 private:
  struct Entry {
    std::int64_t task_id = 0;
    std::future<std::shared_ptr<const TaskPipes>> loading;
    std::shared_ptr<const TaskPipes> pipes;  // once read
    std::uint64_t used = 0;
  };
  void collect();
  void evict();

  const TimelineModel& model_;
  std::atomic<bool> cancel_{false};  // set on destruction: reads still running stop early (before entries_)
  std::vector<Entry> entries_;
  std::uint64_t clock_ = 0;
  std::size_t loads_ = 0;
};

}  // namespace npuscope::viewer
