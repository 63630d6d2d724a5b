// See Note [Pairing on the drain thread] in row_builder.h.
#include "row_builder.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>

namespace npuscope::inject {
namespace {

constexpr int kZstdLevel = 1;  // fast: the drain thread must keep up with the workload
// Bounds on a thread's open API calls and ranges, and on how deep an exit looks for its enter:
// nesting is shallow in practice, and broken pairing (lost records) must not cost O(n) per record.
constexpr std::size_t kMaxOpen = 256;
constexpr std::size_t kMaxSearch = 64;

std::string shape_string(const TensorEntry& e) {
  std::string s;
  for (int d = 0; d < e.ndim; ++d) {
    if (d > 0) s += ',';
    s += std::to_string(e.dims[d]);
  }
  return s;
}

// The layer of an emulated call: the emulator's host API is AscendCL's (aclrt*, aclnn*, an op's
// launch) and HCCL's (Hccl*).
ApiLevel emulated_api_level(const char* name) {
  return name != nullptr && std::string_view(name).starts_with("Hccl") ? ApiLevel::kHccl : ApiLevel::kAcl;
}

}  // namespace

RowBuilder::RowBuilder(collector::TraceWriter& writer, ChunkPool& pool)
    : writer_(writer), pool_(pool), strings_(writer), zstd_(ZSTD_createCCtx()) {}

RowBuilder::~RowBuilder() { ZSTD_freeCCtx(zstd_); }

void RowBuilder::add(Tag tag, const Slot* s) {
  counters_.records++;
  switch (tag) {
#define NPUSCOPE_ON_ENTRY(Record, name, Kind, lost) \
  case Tag::k##Kind: return on_entry(entry_at<EntryOf<hooks::Record>>(s));
    NPUSCOPE_HOOK_RECORDS(NPUSCOPE_ON_ENTRY)  // Note [Record kinds] in hook_api.h
#undef NPUSCOPE_ON_ENTRY
    case Tag::kCommLink: return on_entry(entry_at<CommLinkEntry>(s));
  }
}

RowBuilder::ThreadOpen& RowBuilder::open_for(std::uint32_t thread_id, std::uint64_t ts_ns) {
  if (last_open_ == nullptr || last_open_thread_ != thread_id) {  // a thread's records come in runs
    last_open_ = &open_[thread_id];                               // stable: the map's nodes never move
    last_open_thread_ = thread_id;
  }
  ThreadOpen& t = *last_open_;
  if (ts_ns > t.last_ts) t.last_ts = ts_ns;
  return t;
}

// ---- API calls ------------------------------------------------------------------------------------

void RowBuilder::on(const hooks::ApiRecord& r) {
  ThreadOpen& t = open_for(r.thread_id, r.ts_ns);
  if (r.is_exit == 0) {
    if (t.api.size() == kMaxOpen) {  // the oldest open call will never be closed: count it
      add_api_row(t.api.front(), t.api.front().ts_ns, r.thread_id);
      t.api.erase(t.api.begin());
      counters_.unpaired_api++;
    }
    t.api.push_back(r);
    return;
  }
  // The partner is normally on top; calls left open above it (never exited) end with it.
  const std::size_t lowest = t.api.size() > kMaxSearch ? t.api.size() - kMaxSearch : 0;
  for (std::size_t i = t.api.size(); i-- > lowest;) {
    if (t.api[i].connection_id != r.connection_id) continue;
    for (std::size_t j = t.api.size() - 1; j > i; --j) {
      counters_.unpaired_api++;
      add_api_row(t.api[j], r.ts_ns, r.thread_id);
    }
    add_api_row(t.api[i], r.ts_ns, r.thread_id);
    t.api.resize(i);
    return;
  }
  if (r.start_ns != 0) {  // the usual case: enters are not recorded, the exit says when the call began
    hooks::ApiRecord enter = r;
    enter.ts_ns = r.start_ns;
    add_api_row(enter, r.ts_ns, r.thread_id);
    return;
  }
  counters_.unpaired_api++;  // an exit whose enter was never recorded (dropped, or before init)
}

void RowBuilder::add_api_row(const hooks::ApiRecord& enter, std::uint64_t end_ns, std::uint32_t thread_id) {
  add_row(collector::ApiRow{.start_ns = static_cast<std::int64_t>(enter.ts_ns),
                            .end_ns = static_cast<std::int64_t>(end_ns),
                            .name_id = strings_.id(enter.name),
                            .connection_id = static_cast<std::int64_t>(enter.connection_id),
                            .thread_id = static_cast<std::int32_t>(thread_id),
                            .kind = static_cast<std::int32_t>(enter.kind),
                            .level = static_cast<std::int32_t>(emulated_api_level(enter.name))});
}

// ---- tasks, memory, copies, devices -----------------------------------------------------------------

void RowBuilder::on(const hooks::TaskRecord& r) {
  counters_.underflow_tasks += r.underflow != 0 ? 1 : 0;
  add_row(to_row(r, strings_));
}

void RowBuilder::on(const hooks::MemoryRecord& r) {
  collector::MemoryRow row = to_row(r, strings_);
  row.seq = memory_seq(r.device_id, r.seq);
  add_row(row);
}

// The record's 32-bit seq extended to 64 bits: the device's records reach us out of allocator order
// only by the few in flight in other threads' buffers, far less than 2^31 apart, so the nearest
// 64-bit value to the last one seen with these low bits is the one.
std::int64_t RowBuilder::memory_seq(std::int32_t device_id, std::uint32_t seq) {
  auto it = std::find_if(memory_seqs_.begin(), memory_seqs_.end(), [&](const auto& d) { return d.first == device_id; });
  if (it == memory_seqs_.end()) {  // the device's first record: its low bits are all there is to go on
    memory_seqs_.emplace_back(device_id, std::int64_t{seq});
    return seq;
  }
  const std::int64_t last = it->second;
  const auto delta = static_cast<std::int32_t>(seq - static_cast<std::uint32_t>(last));
  const std::int64_t extended = last + delta;
  if (extended > last) it->second = extended;
  return extended;
}

void RowBuilder::on(const hooks::OverflowRecord& r) {
  // TASK.overflow already says which task overflowed; the saturated flag is only counted.
  counters_.overflow_tasks++;
  if (r.saturated != 0) counters_.saturated_tasks++;
}

void RowBuilder::on(const hooks::DeviceRecord& r) {
  collector::DeviceInfoRow row;
  row.device_id = r.device_id;
  row.name = r.name != nullptr ? r.name : "";
  row.cube_cores = r.cube_cores;
  row.vector_cores = r.vector_cores;
  row.clock_hz = r.clock_hz;
  row.cube_peak_flops = r.cube_peak_flops;
  row.vector_peak_flops = r.vector_peak_flops;
  row.memory_bandwidth = r.memory_bandwidth;
  row.memory_bytes = static_cast<std::int64_t>(r.memory_bytes);
  row.cube_ceiling_flops = r.cube_ceiling_flops;
  row.vector_ceiling_flops = r.vector_ceiling_flops;
  row.memory_ceiling_bandwidth = r.memory_ceiling_bandwidth;
  row.cube_f32_rate = r.cube_f32_rate;
  row.precision_mode = r.precision_mode != nullptr ? r.precision_mode : "";
  row.overflow_mode = r.overflow_mode != nullptr ? r.overflow_mode : "";
  // The emulator announces its devices again when the runtime is reconfigured: one row per change.
  const auto key = [](const collector::DeviceInfoRow& d) {
    return std::tie(d.device_id, d.name, d.cube_cores, d.vector_cores, d.clock_hz, d.cube_peak_flops,
                    d.vector_peak_flops, d.memory_bandwidth, d.memory_bytes, d.precision_mode, d.overflow_mode,
                    d.cube_ceiling_flops, d.vector_ceiling_flops, d.memory_ceiling_bandwidth, d.cube_f32_rate);
  };
  for (const auto& d : devices_) {
    if (key(d) == key(row)) return;
  }
  devices_.push_back(row);
  writer_.add(row);
  // A golden run's trace says so (Note [Golden run] in emulator/runtime.h), whatever reads it later.
  if (r.golden != 0) writer_.set_meta(collector::kMetaGolden, "1");
  wrote_ = true;
}

// ---- markers and steps ------------------------------------------------------------------------------

void RowBuilder::on(const hooks::MarkerRecord& r) {
  ThreadOpen& t = open_for(r.thread_id, r.ts_ns);
  switch (r.kind) {
    case hooks::MarkerEvent::kRangePush:
      if (t.ranges.size() == kMaxOpen) {  // as for API calls: the oldest open range is given up
        add_range_row(t.ranges.front(), t.ranges.front().ts_ns, r.thread_id);
        t.ranges.erase(t.ranges.begin());
        counters_.unpaired_markers++;
      }
      t.ranges.push_back({r.ts_ns, r.name});
      return;
    case hooks::MarkerEvent::kRangePop:
      if (t.ranges.empty()) {
        counters_.unpaired_markers++;
        return;
      }
      add_range_row(t.ranges.back(), r.ts_ns, r.thread_id);
      t.ranges.pop_back();
      return;
    case hooks::MarkerEvent::kStepBegin:
      if (t.in_step) add_step_row(t, r.ts_ns, r.thread_id);  // a new step ends the previous one
      t.in_step = true;
      t.step_ts = r.ts_ns;
      t.step = r.step;
      return;
    case hooks::MarkerEvent::kStepEnd:
      if (!t.in_step) {
        counters_.unpaired_markers++;
        return;
      }
      add_step_row(t, r.ts_ns, r.thread_id);
      t.in_step = false;
      return;
  }
}

void RowBuilder::add_range_row(const OpenRange& open, std::uint64_t end_ns, std::uint32_t thread_id) {
  collector::MarkerRow row;
  row.start_ns = static_cast<std::int64_t>(open.ts_ns);
  row.end_ns = static_cast<std::int64_t>(end_ns);
  row.name_id = strings_.id(open.name);
  row.thread_id = static_cast<std::int32_t>(thread_id);
  row.kind = static_cast<std::int32_t>(MarkerKind::kRange);
  row.step = -1;
  add_row(row);
}

void RowBuilder::add_step_row(const ThreadOpen& t, std::uint64_t end_ns, std::uint32_t thread_id) {
  collector::MarkerRow row;
  row.start_ns = static_cast<std::int64_t>(t.step_ts);
  row.end_ns = static_cast<std::int64_t>(end_ns);
  row.name_id = strings_.id_of_content("step " + std::to_string(t.step));
  row.thread_id = static_cast<std::int32_t>(thread_id);
  row.kind = static_cast<std::int32_t>(MarkerKind::kStep);
  row.step = t.step;
  add_row(row);
}

// ---- many ranks (Note [Collective records] in hook_api.h) ----------------------------------------

void RowBuilder::on_entry(const CommLinkEntry& e) {
  add_row(collector::CommunicationLinkRow{.task_id = static_cast<std::int64_t>(e.task_id),
                                          .peer_rank = e.r.peer_rank,
                                          .transport = static_cast<std::int32_t>(e.r.transport),
                                          .bytes = static_cast<std::int64_t>(e.r.bytes),
                                          .time_ns = static_cast<std::int64_t>(e.r.time_ns)});
}

void RowBuilder::on(const hooks::RankRecord& r) {
  writer_.set_meta(collector::kMetaRank, std::to_string(r.rank));
  writer_.set_meta(collector::kMetaWorldSize, std::to_string(r.world_size));
  writer_.set_meta(collector::kMetaNode, std::to_string(r.node));
  writer_.set_meta(collector::kMetaLocalRank, std::to_string(r.local_rank));
  if (r.hostname != nullptr) writer_.set_meta(collector::kMetaHostname, r.hostname);
  if (r.launcher != nullptr) writer_.set_meta(collector::kMetaLauncher, r.launcher);
  wrote_ = true;
}

// ---- tensors --------------------------------------------------------------------------------------

void RowBuilder::on_entry(const TensorEntry& e) {
  collector::TensorRow& row = tensor_;
  row.task_id = static_cast<std::int64_t>(e.task_id);
  row.role = e.role;
  row.idx = e.index;
  row.dtype = e.dtype;
  row.shape = shape_string(e);
  row.numel = e.stats.numel;
  row.min = e.stats.min;
  row.max = e.stats.max;
  row.mean = e.stats.mean;
  row.l2norm = e.stats.l2norm;
  row.nan_count = e.stats.nan_count;
  row.inf_count = e.stats.inf_count;
  row.address = static_cast<std::int64_t>(e.address);
  row.crc32 = e.crc32;
  row.data.clear();
  row.data_bytes = 0;
  if (e.data != nullptr) {
    row.data.resize(ZSTD_compressBound(e.data_bytes));
    const std::size_t n = ZSTD_compressCCtx(zstd_, row.data.data(), row.data.size(), e.data, e.data_bytes, kZstdLevel);
    std::free(e.data);
    pool_.unreserve_bytes(e.data_bytes);
    if (ZSTD_isError(n)) throw collector::TraceError(std::string("zstd: ") + ZSTD_getErrorName(n));
    row.data.resize(n);
    row.data_bytes = static_cast<std::int64_t>(e.data_bytes);
    counters_.tensors_dumped++;
    counters_.tensor_bytes_dumped += row.data_bytes;
    counters_.tensor_bytes_compressed += static_cast<std::int64_t>(n);
  }
  writer_.add(row);
  wrote_ = true;
}

// ---- batches --------------------------------------------------------------------------------------

void RowBuilder::flush() {
  std::apply([this](auto&... batch) { (flush(batch), ...); }, batches_);
}

void RowBuilder::finish() {
  for (auto& [thread_id, t] : open_) {
    for (const auto& a : t.api) add_api_row(a, t.last_ts, thread_id);
    for (const auto& m : t.ranges) add_range_row(m, t.last_ts, thread_id);
    if (t.in_step) add_step_row(t, t.last_ts, thread_id);
    counters_.unpaired_api += static_cast<std::int64_t>(t.api.size());
    counters_.unpaired_markers += static_cast<std::int64_t>(t.ranges.size()) + (t.in_step ? 1 : 0);
    t = ThreadOpen{};
  }
  flush();
}

}  // namespace npuscope::inject
