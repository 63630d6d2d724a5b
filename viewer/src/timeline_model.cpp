// Loading the lanes (Note [Timeline model]): every table is read once, in start order, so each row
// is built by appending.
#include "npuscope/viewer/timeline_model.h"

#include "npuscope/collector/huge_pages.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <thread>
#include <unordered_map>

namespace npuscope::viewer {
namespace {

using collector::TaskRow;

// Note [Lanes sized up front]
// A stream's or a host thread's first row takes most of its table's rows (a 10M-task stream is
// 240 MB), so it is reserved for the whole table when its lane is made: address space only, as
// pages are not resident until touched, and the row never grows by copying. Loading 10M tasks took
// 2.8 s growing 4x at a time and 2.0 s reserved (bench/viewer_load_bench.cpp: the copies, and the
// faults on the pages each growth touched again). The reserve is in ordinary pages; huge pages
// (Note [Huge pages for row arrays] in npuscope/collector/huge_pages.h) are asked for once the row
// is big, so that a trace of a thousand small streams does not take a 2 MiB page for each. Other
// rows (nesting levels, overlapping copies) and a lane whose reserve failed grow 4x at a time: each
// growth copies the row, and the slack costs address space only.
constexpr std::size_t kBigRowItems = collector::kHugePageBytes * 2 / sizeof(TimelineItem);

void reserve_whole_table(std::vector<TimelineItem>& row, std::int64_t table_rows) {
  try {
    row.reserve(static_cast<std::size_t>(std::clamp<std::int64_t>(table_rows, 0, PTRDIFF_MAX / 64)));
  } catch (const std::bad_alloc&) {  // no address space for it (ulimit -v, strict overcommit): grows as it fills
  }
}

void append(std::vector<TimelineItem>& row, const TimelineItem& item) {
  if (row.size() == row.capacity()) {
    collector::reserve_in_huge_pages(row, std::max<std::size_t>(64, 4 * row.size()));
  } else if (row.size() == kBigRowItems) {  // a reserved row became big
    collector::advise_huge_pages(row.data() + row.size(), (row.capacity() - row.size()) * sizeof(TimelineItem));
  }
  row.push_back(item);
}

void add_to_row(Lane& lane, std::size_t row, const TimelineItem& item) {
  if (lane.rows.size() <= row) lane.rows.resize(row + 1);
  append(lane.rows[row], item);
}

// A big row keeps its slack: the slack's pages were never touched, so they are not resident, and
// shrinking would copy the row (0.5 s for 10M tasks). A smaller one is shrunk (finish()).
bool is_big(const std::vector<TimelineItem>& row) { return row.size() >= kBigRowItems; }
// What a row costs the process.
std::size_t resident_bytes(const std::vector<TimelineItem>& row) {
  if (!is_big(row)) return row.capacity() * sizeof(TimelineItem);
  const std::size_t used = row.size() * sizeof(TimelineItem), page = collector::kHugePageBytes;
  return std::min(row.capacity() * sizeof(TimelineItem), (used + page - 1) / page * page);
}

}  // namespace

// Items that may overlap, arriving in start order (copies on several streams, nested API calls and
// markers, a trace's overlapping instructions of one pipe): each goes to the first row free at its
// start. For properly nested ranges that row is the nesting depth.
void add_without_overlap(Lane& lane, const TimelineItem& item) {
  for (std::size_t r = 0; r < lane.rows.size(); ++r) {
    if (lane.rows[r].empty() || lane.rows[r].back().end_ns() <= item.start_ns) return append(lane.rows[r], item);
  }
  add_to_row(lane, lane.rows.size(), item);
}

TimelineItem TimelineItem::make(std::int64_t start_ns, std::int64_t end_ns, std::int64_t label_id, std::int64_t id,
                                std::uint32_t flags) {
  const std::int64_t ns = std::max<std::int64_t>(0, end_ns - start_ns);
  const bool micros = ns > std::numeric_limits<std::uint32_t>::max();
  const std::int64_t units =
      micros ? std::min<std::int64_t>((ns + 999) / 1000, std::numeric_limits<std::uint32_t>::max()) : ns;
  return {start_ns, static_cast<std::uint32_t>(units), collector::compact_string_id(label_id),
          static_cast<std::uint32_t>(id), flags | (micros ? kMicros : 0u)};
}

TimelineModel::TimelineModel(const collector::TraceReader& trace) : trace_(trace) {
  // The two big tables at once: tasks through their own connection (load_tasks), API calls and
  // markers through `trace` on a second thread. Lanes stay in one order: streams, copies, memory,
  // host threads, markers.
  std::vector<Lane> host_lanes;
  std::exception_ptr host_error;
  {
    std::jthread host([&] {
      try {
        host_lanes = load_apis();
        for (Lane& lane : load_pytorch()) host_lanes.push_back(std::move(lane));
        for (Lane& lane : load_markers()) host_lanes.push_back(std::move(lane));
        kernels_.load(trace_);
      } catch (...) {
        host_error = std::current_exception();
      }
    });
    load_tasks();
  }  // joined here, also when load_tasks throws
  if (host_error) std::rethrow_exception(host_error);
  load_copies_and_memory();
  for (Lane& lane : host_lanes) lanes_.push_back(std::move(lane));
  load_compare_results();
  flag_kernels();
  finish();
}

void TimelineModel::load_tasks() {
  // The columns the timeline draws; the rest is read when a task is selected.
  const auto reader = collector::TraceReader::open(
      trace_.path(), {.verify = false,
                      .skip_columns = {"TASK.queued_ns", "TASK.connection_id", "TASK.block_dim", "TASK.flops",
                                       "TASK.bytes", "TASK.fallback", "TASK.compute_dtype", "TASK.call_index",
                                       "TASK.emulation_ns", "TASK.pytorch_api_id", "TASK.subnormal"}});
  const std::int64_t task_rows = reader->count("TASK");
  std::map<std::pair<std::int32_t, std::int32_t>, std::size_t> lane_of;  // (device, stream or thread)
  std::pair<std::int32_t, std::int32_t> last_key{0, 0};
  Lane* last = nullptr;
  reader->for_each([&](const TaskRow& t) {
    if (is(t.task_type, TaskType::kMemcpy)) return;  // drawn from MEMCPY
    // The cpu golden backend has no streams: its tasks run inline on the calling thread.
    const std::pair<std::int32_t, std::int32_t> key{t.device_id, t.device_id >= 0 ? t.stream_id : t.thread_id};
    if (!last || key != last_key) {
      const auto [it, added] = lane_of.try_emplace(key, lanes_.size());
      if (added) {
        Lane lane;
        lane.kind = LaneKind::kStream;
        lane.device_id = t.device_id;
        lane.stream_id = key.second;
        lane.title = t.device_id >= 0 ? "npu:" + std::to_string(t.device_id) + " stream " + std::to_string(t.stream_id)
                                      : "cpu thread " + std::to_string(t.thread_id);
        lane.rows.resize(1);
        reserve_whole_table(lane.rows[0], task_rows);
        lanes_.push_back(std::move(lane));
      }
      last = &lanes_[it->second];
      last_key = key;
    }
    ++tasks_;
    const std::int32_t name = collector::compact_string_id(t.name_id);
    if (static_cast<std::size_t>(name) >= type_of_name_.size())
      type_of_name_.resize(static_cast<std::size_t>(name) + 1, 0);
    type_of_name_[static_cast<std::size_t>(name)] = collector::compact_string_id(t.op_type_id);
    const std::uint32_t flags = (t.overflow ? kOverflow : 0u) | (t.underflow > 0 ? kUnderflow : 0u) |
                                static_cast<std::uint32_t>(t.task_type & 0xff) << kTaskTypeShift;
    append(last->rows[0], TimelineItem::make(t.start_ns, t.end_ns, name, t.task_id, flags));
  });
  // Device lanes first, by device and stream; then the cpu backend's threads.
  std::stable_sort(lanes_.begin(), lanes_.end(), [](const Lane& a, const Lane& b) {
    if ((a.device_id < 0) != (b.device_id < 0)) return a.device_id >= 0;
    return std::pair{a.device_id, a.stream_id} < std::pair{b.device_id, b.stream_id};
  });
}

void TimelineModel::load_copies_and_memory() {
  std::map<std::int32_t, Lane> copies, memory;
  trace_.for_each([&](const collector::MemcpyRow& m) {
    Lane& lane = copies[m.device_id];
    if (lane.rows.empty()) {
      lane.kind = LaneKind::kMemcpy;
      lane.device_id = m.device_id;
      lane.title = "npu:" + std::to_string(m.device_id) + " copies";
      lane.rows.resize(1);
    }
    add_without_overlap(lane, TimelineItem::make(m.start_ns, m.end_ns, 0, m.task_id,
                                                 static_cast<std::uint32_t>(m.copy_kind & 0xff) << kCopyKindShift));
  });
  trace_.for_each([&](const collector::MemoryRow& m) {
    Lane& lane = memory[m.device_id];
    lane.kind = LaneKind::kMemory;
    lane.device_id = m.device_id;
    lane.title = "npu:" + std::to_string(m.device_id) + " memory";
    lane.samples.push_back({m.ts_ns, m.allocated_bytes, m.reserved_bytes});
    lane.peak_reserved = std::max({lane.peak_reserved, m.reserved_bytes, m.allocated_bytes});
  });
  for (auto& [device, lane] : copies) lanes_.push_back(std::move(lane));
  for (auto& [device, lane] : memory) lanes_.push_back(std::move(lane));
}

std::vector<Lane> TimelineModel::load_apis() const {
  std::map<std::int32_t, Lane> threads;
  const std::int64_t api_rows = trace_.count("API");
  trace_.for_each([&](const collector::ApiRow& a) {
    Lane& lane = threads[a.thread_id];
    if (lane.rows.empty()) {
      lane.kind = LaneKind::kHostThread;
      lane.thread_id = a.thread_id;
      lane.rows.resize(1);
      reserve_whole_table(lane.rows[0], api_rows);
    }
    add_without_overlap(lane, TimelineItem::make(a.start_ns, a.end_ns, a.name_id, a.connection_id, 0));
  });
  std::vector<Lane> lanes;
  for (auto& [thread, lane] : threads) {
    lane.title = "thread " + std::to_string(thread);
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

std::vector<Lane> TimelineModel::load_markers() const {
  std::map<std::int32_t, Lane> threads;
  trace_.for_each([&](const collector::MarkerRow& m) {
    Lane& lane = threads[m.thread_id];
    lane.kind = LaneKind::kMarkers;
    lane.thread_id = m.thread_id;
    add_without_overlap(
        lane, TimelineItem::make(m.start_ns, m.end_ns, m.name_id, m.step, is(m.kind, MarkerKind::kStep) ? kStep : 0u));
  });
  std::vector<Lane> lanes;
  for (auto& [thread, lane] : threads) {
    lane.title = "thread " + std::to_string(thread) + " markers";
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

// A PyTorch script's aten ops, module calls and autograd functions (PYTORCH_API), one lane per host
// thread, nested by depth. Ranges that start together are ordered outermost first (the table breaks
// such ties by insertion order, which is end order: innermost first).
std::vector<Lane> TimelineModel::load_pytorch() const {
  std::vector<collector::PytorchApiRow> ops = trace_.rows<collector::PytorchApiRow>();
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  std::map<std::int32_t, Lane> threads;
  for (const collector::PytorchApiRow& op : ops) {
    Lane& lane = threads[op.thread_id];
    lane.kind = LaneKind::kPytorch;
    lane.thread_id = op.thread_id;
    const std::uint32_t flags = static_cast<std::uint32_t>(op.kind & 0xff) << kHostOpKindShift |
                                static_cast<std::uint32_t>(op.pass & 0xff) << kPassShift;
    add_without_overlap(lane, TimelineItem::make(op.start_ns, op.end_ns, op.name_id, op.id, flags));
  }
  std::vector<Lane> lanes;
  for (auto& [thread, lane] : threads) {
    lane.title = "thread " + std::to_string(thread) + " PyTorch";
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

void TimelineModel::load_compare_results() {
  std::map<std::uint32_t, std::uint32_t> flags_of;  // compared tasks only: a model's ops, not every task
  trace_.for_each([&](const collector::CompareResultRow& r) {
    // Outputs decide an op's verdict; n/a says nothing.
    if (!is(r.role, TensorRole::kOutput) || is(r.verdict, Verdict::kNotApplicable)) return;
    std::uint32_t& f = flags_of[static_cast<std::uint32_t>(r.task_id)];
    if (is(r.verdict, Verdict::kFail)) f = (f & ~kVerdictPass) | kVerdictFail;
    if (is(r.verdict, Verdict::kPass) && !(f & kVerdictFail)) f |= kVerdictPass;
    if (is(r.origin, ErrorOrigin::kIntroduced)) f |= kIntroduced;
  });
  has_compare_ = !flags_of.empty();
  if (!has_compare_) return;
  for (Lane& lane : lanes_) {
    if (lane.kind != LaneKind::kStream) continue;
    for (TimelineItem& item : lane.rows[0]) {
      const auto it = flags_of.find(item.id);  // ids are the tasks' low 32 bits: see TimelineItem
      if (it != flags_of.end()) item.flags |= it->second;
    }
  }
}

void TimelineModel::flag_kernels() {
  if (kernels_.empty()) return;
  std::unordered_map<std::uint32_t, std::uint32_t> flags_of;  // by the tasks' low 32 bits, as items keep them
  for (const std::int64_t id : kernels_.kernel_tasks()) flags_of[static_cast<std::uint32_t>(id)] |= kKernel;
  for (const std::int64_t id : kernels_.tasks_with_findings())
    flags_of[static_cast<std::uint32_t>(id)] |= kKernelFinding;
  for (Lane& lane : lanes_) {
    if (lane.kind != LaneKind::kStream) continue;
    for (TimelineItem& item : lane.rows[0]) {
      const auto it = flags_of.find(item.id);
      if (it != flags_of.end()) item.flags |= it->second;
    }
  }
}

void TimelineModel::finish() {
  for (Lane& lane : lanes_) {  // slack (growth, or a whole table's reserve) would be most of a small row
    for (auto& row : lane.rows) {
      if (!is_big(row)) row.shrink_to_fit();
    }
    lane.samples.shrink_to_fit();
  }
  first_ns_ = std::numeric_limits<std::int64_t>::max();
  last_ns_ = std::numeric_limits<std::int64_t>::min();
  for (const Lane& lane : lanes_) {
    for (const auto& row : lane.rows) {
      if (row.empty()) continue;
      first_ns_ = std::min(first_ns_, row.front().start_ns);
      last_ns_ = std::max(last_ns_, row.back().end_ns());
    }
    if (!lane.samples.empty()) {
      first_ns_ = std::min(first_ns_, lane.samples.front().ts_ns);
      last_ns_ = std::max(last_ns_, lane.samples.back().ts_ns);
    }
  }
  if (first_ns_ > last_ns_) first_ns_ = last_ns_ = 0;  // an empty trace
}

std::size_t TimelineModel::memory_bytes() const {
  std::size_t bytes = lanes_.capacity() * sizeof(Lane) + kernels_.memory_bytes();
  for (const Lane& lane : lanes_) {
    for (const auto& row : lane.rows) bytes += resident_bytes(row);
    bytes += lane.rows.capacity() * sizeof(std::vector<TimelineItem>) + lane.samples.capacity() * sizeof(CounterSample);
  }
  return bytes;
}

std::int32_t TimelineModel::colour_key(const Lane& lane, const TimelineItem& item) const {
  switch (lane.kind) {
    case LaneKind::kStream: {
      const auto name = static_cast<std::size_t>(item.label_id);
      return name < type_of_name_.size() ? type_of_name_[name] : 0;
    }
    case LaneKind::kMemcpy: return static_cast<std::int32_t>((item.flags >> kCopyKindShift) & 0xff);
    default: return item.label_id;
  }
}

bool TimelineModel::find_task(std::int64_t task_id, Location& where) const {
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    if (lanes_[l].kind != LaneKind::kStream) continue;
    const auto& row = lanes_[l].rows[0];
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (row[i].has_id(task_id)) {
        where = {l, 0, i};
        return true;
      }
    }
  }
  return false;
}

bool TimelineModel::find_launch(std::int64_t connection_id, Location& where) const {
  if (connection_id == 0) return false;
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    if (lanes_[l].kind != LaneKind::kHostThread) continue;
    for (std::size_t r = 0; r < lanes_[l].rows.size(); ++r) {
      const auto& row = lanes_[l].rows[r];
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (row[i].has_id(connection_id)) {
          where = {l, r, i};
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace npuscope::viewer
