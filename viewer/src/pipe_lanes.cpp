// Reading a custom kernel's instructions into lanes, and keeping the last few tasks' (Note [Pipe lanes]).
#include "npuscope/viewer/pipe_lanes.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

namespace npuscope::viewer {
namespace {

struct Cancelled {};  // thrown out of the reader's callback to end a read early

// A cycle count as an item coordinate: within int64 with room for visible_items' sums.
std::int64_t to_cycles(double c) {
  constexpr double kLimit = 4e18;
  return static_cast<std::int64_t>(std::clamp(c, -kLimit, kLimit));
}

double ns_per_cycle(const collector::KernelBlockRow& b, double clock_hz) {
  if (clock_hz > 0) return 1e9 / clock_hz;
  if (b.cycles > 0 && b.end_ns > b.start_ns)
    return static_cast<double>(b.end_ns - b.start_ns) / static_cast<double>(b.cycles);
  return 1;
}

// A block's lanes from its instructions, by pipe (indexed by Pipe value) as read.
void make_lanes(BlockPipes& block, std::array<std::vector<TimelineItem>, kNumPipes>& by_pipe) {
  for (const Pipe pipe : kPipeLaneOrder) {
    std::vector<TimelineItem>& items = by_pipe[static_cast<std::size_t>(pipe)];
    if (items.empty()) continue;
    // The reader gives each pipe's instructions by start cycle; a trace in another order still draws.
    const auto by_start = [](const TimelineItem& a, const TimelineItem& b) { return a.start_ns < b.start_ns; };
    if (!std::is_sorted(items.begin(), items.end(), by_start)) std::stable_sort(items.begin(), items.end(), by_start);
    Lane lane;
    lane.kind = LaneKind::kPipe;
    lane.title = std::string(enum_name(pipe));
    lane.rows.resize(1);
    lane.rows[0].reserve(items.size());
    for (const TimelineItem& item : items) add_without_overlap(lane, item);
    for (auto& row : lane.rows) row.shrink_to_fit();
    block.lanes.push_back(std::move(lane));
    std::vector<TimelineItem>().swap(items);
  }
  block.details.shrink_to_fit();
}

}  // namespace

ViewRange BlockPipes::cycle_view(const ViewRange& ns_view) const {
  const auto cycle_at = [&](std::int64_t ns) {
    return (static_cast<double>(ns) - static_cast<double>(block.start_ns)) / ns_per_cycle;
  };
  ViewRange v{to_cycles(std::floor(cycle_at(ns_view.start_ns))), to_cycles(std::ceil(cycle_at(ns_view.end_ns))),
              ns_view.width_px};
  if (v.end_ns <= v.start_ns) v.end_ns = v.start_ns + 1;
  return v;
}

const BlockPipes* TaskPipes::block(std::int32_t index) const {
  const auto it =
      std::partition_point(blocks.begin(), blocks.end(), [&](const BlockPipes& b) { return b.block.block < index; });
  return it != blocks.end() && it->block.block == index ? &*it : nullptr;
}

std::size_t TaskPipes::memory_bytes() const {
  std::size_t bytes = blocks.capacity() * sizeof(BlockPipes);
  for (const BlockPipes& b : blocks) {
    bytes += b.details.capacity() * sizeof(InstructionDetail) + b.lanes.capacity() * sizeof(Lane);
    for (const Lane& lane : b.lanes) {
      for (const auto& row : lane.rows) bytes += row.capacity() * sizeof(TimelineItem);
    }
  }
  return bytes;
}

TaskPipes load_task_pipes(const collector::TraceReader& trace, std::int64_t task_id,
                          std::span<const collector::KernelBlockRow> blocks, double clock_hz,
                          const std::atomic<bool>* cancel) {
  TaskPipes out;
  out.task_id = task_id;
  out.blocks.resize(blocks.size());
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    out.blocks[b].block = blocks[b];
    out.blocks[b].ns_per_cycle = ns_per_cycle(blocks[b], clock_hz);
  }
  std::vector<std::array<std::vector<TimelineItem>, kNumPipes>> items(blocks.size());
  std::size_t rows = 0;
  try {
    trace.for_each(
        [&](const collector::PipeInstructionRow& r) {
          if (cancel != nullptr && (++rows & 0xffff) == 0 && cancel->load(std::memory_order_relaxed)) throw Cancelled{};
          const BlockPipes* found = out.block(r.block);
          const std::optional<Pipe> pipe = enum_from_value<Pipe>(r.pipe);
          if (found == nullptr || !pipe) {
            ++out.not_shown;  // a block without its KERNEL_BLOCK row, or a pipe this build does not know
            return;
          }
          const auto b = static_cast<std::size_t>(found - out.blocks.data());
          BlockPipes& block = out.blocks[b];
          const std::int64_t id = static_cast<std::int64_t>(block.details.size());
          block.details.push_back({r.start_ns, r.end_ns, r.bytes, collector::compact_string_id(r.file_id), r.line});
          items[b][static_cast<std::size_t>(*pipe)].push_back(TimelineItem::make(
              r.start_cycle, r.end_cycle, r.name_id, id, static_cast<std::uint32_t>(*pipe) << kPipeShift));
        },
        {.task_id = task_id});
  } catch (const Cancelled&) {
    out.error = "cancelled";
    return out;
  }
  for (std::size_t b = 0; b < out.blocks.size(); ++b) {
    make_lanes(out.blocks[b], items[b]);
    out.instructions += out.blocks[b].details.size();
  }
  return out;
}

PipeCache::~PipeCache() {
  cancel_.store(true);
  entries_.clear();  // waits for the reads still running, which stop at their next check
}

std::shared_ptr<const TaskPipes> PipeCache::get(std::int64_t task_id, std::int32_t device_id, bool wait) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.task_id == task_id; });
  if (it == entries_.end()) {
    const std::span<const collector::KernelBlockRow> blocks = model_.kernels().blocks_of(task_id);
    if (blocks.empty()) return nullptr;
    Entry e;
    e.task_id = task_id;
    e.loading = std::async(std::launch::async, [&trace = model_.trace(), task_id, blocks,
                                                clock_hz = model_.kernels().clock_hz(device_id), cancel = &cancel_] {
      auto pipes = std::make_shared<TaskPipes>();
      try {
        *pipes = load_task_pipes(trace, task_id, blocks, clock_hz, cancel);
      } catch (const std::exception& ex) {
        pipes->task_id = task_id;
        pipes->error = ex.what();
      }
      return std::shared_ptr<const TaskPipes>(std::move(pipes));
    });
    ++loads_;
    entries_.push_back(std::move(e));
    it = entries_.end() - 1;
  }
  it->used = ++clock_;
  if (wait && !it->pipes) it->pipes = it->loading.get();
  const std::shared_ptr<const TaskPipes> pipes = it->pipes;
  collect();
  evict();  // never the entry just asked for
  return pipes ? pipes : std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
                           return e.task_id == task_id;
                         })->pipes;
}

// Takes the result of every read that has ended, also of tasks no longer asked for (so that they
// count, and can be evicted).
void PipeCache::collect() {
  for (Entry& e : entries_) {
    if (!e.pipes && e.loading.valid() && e.loading.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      e.pipes = e.loading.get();
  }
}

// Drops the least recently asked-for tasks that are read (never the newest, never one being read)
// while the cache holds more than kCachedTasks tasks or kCachedInstructions instructions.
void PipeCache::evict() {
  for (;;) {
    std::size_t instructions = 0;
    for (const Entry& e : entries_) instructions += e.pipes ? e.pipes->instructions : 0;
    if (entries_.size() <= kCachedTasks && instructions <= kCachedInstructions) return;
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->pipes && it->used != clock_ && (oldest == entries_.end() || it->used < oldest->used)) oldest = it;
    }
    if (oldest == entries_.end()) return;
    entries_.erase(oldest);
  }
}

}  // namespace npuscope::viewer
