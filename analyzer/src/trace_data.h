// The rows every analysis reads, loaded from the trace once, in start-time order.
//
// Note [Compact rows]
// A 10M-task trace must analyse in well under 2 GB (bench/analyze_bench.cpp), so the analyses do not
// hold the reader's TaskRow (128 bytes) and ApiRow (40): Task keeps the 19 columns some finding reads
// in 96 bytes, Api the 4 in 24, string ids narrowed to 32 bits (a trace has far fewer strings; an id
// out of range reads as the empty string), and the reader leaves the other columns out of its query.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "npuscope/collector/time_math.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

using collector::DeviceInfoRow;
using collector::MemcpyRow;
using collector::MemoryRow;

struct Task {
  std::int64_t task_id = 0, start_ns = 0, end_ns = 0, queued_ns = 0, flops = 0, bytes = 0;
  std::int64_t pytorch_api_id = 0;  // the framework op that launched it (PYTORCH_API.id); 0 none
  std::int32_t name_id = 0, op_type_id = 0, device_id = 0, stream_id = 0, block_dim = 0, thread_id = 0;
  std::uint32_t underflow = 0, subnormal = 0;  // TASK.underflow, TASK.subnormal (saturated)
  std::int8_t task_type = 0, overflow = 0, fallback = 0, compute_dtype = 0;
};
static_assert(sizeof(Task) == 96, "Note [Compact rows]: a 10M-task analysis holds 10M of them");

// A PYTORCH_API row, the columns the model view reads (pytorch_model.cpp).
struct HostOp {
  std::int64_t id = 0, parent_id = 0, start_ns = 0, end_ns = 0;
  std::int32_t name_id = 0, module_id = 0;
  std::int8_t kind = 0, pass = 0;
};

struct Api {
  std::int64_t start_ns = 0, end_ns = 0;
  std::int32_t name_id = 0, thread_id = 0;
};

// Timestamps are within [0, kMaxTimestampNs] (TraceData refuses others: Note [Timestamp range] in
// time_math.h), so a difference fits; sums over many rows use add_ns.
inline std::int64_t duration(const Task& t) { return t.end_ns - t.start_ns; }
inline std::int64_t add_ns(std::int64_t a, std::int64_t b) { return collector::add_saturated(a, b); }

// Note [Timestamp range] (time_math.h): throws collector::TraceError naming the row ("TASK row
// (task_id 7): end_ns = ...") when one of its `times` is outside the range; `id_name` null: no row.
void check_times(const collector::TraceReader& r, const char* table, const char* id_name, std::int64_t id,
                 std::initializer_list<std::pair<const char*, std::int64_t>> times);

struct TraceData {
  // Throws AnalyzeCancelled once `cancel` (optional) is set, checked every 64Ki rows.
  explicit TraceData(const collector::TraceReader& reader, const std::atomic<bool>* cancel = nullptr);

  const std::string& str(collector::StringId id) const { return reader.string(id); }
  const DeviceInfoRow* device(std::int32_t id) const {
    const auto it = devices.find(id);
    return it == devices.end() ? nullptr : &it->second;
  }
  // What an API call does (API.kind): a synchronization blocks the host until the device is done.
  ApiKind kind(const Api& a) const {
    const auto id = static_cast<std::size_t>(a.name_id);
    return id < api_kinds.size() ? api_kinds[id] : ApiKind::kOther;
  }
  bool is_sync_api(const Api& a) const { return kind(a) == ApiKind::kSynchronize; }
  // A call that blocks the host on the device: a synchronization or a blocking copy.
  bool is_blocking_api(const Api& a) const { return blocks_host(kind(a)); }

  const collector::TraceReader& reader;
  // META source: the tool that wrote the profile this trace was imported from ("kineto", ...); empty
  // for a trace the emulator recorded. Rules that model the emulator (virtual time, the cost model's
  // FLOPs and ceilings) say so on an imported trace instead of judging it.
  std::string source;
  bool imported() const { return !source.empty(); }
  // Kernel tasks on devices (not the cpu golden backend): is_device_kernel. Their queued_ns is their
  // launch (Note [Launch time] in launch_times.h: an imported trace's from the host call joined to it).
  std::vector<Task> kernels;
  std::vector<Task> collectives;  // communication ops on devices (TASK type HCCL), in start order
  std::vector<Api> apis;
  std::vector<MemoryRow> memory;
  std::vector<MemcpyRow> memcpys;
  std::map<std::int32_t, DeviceInfoRow> devices;
  std::vector<HostOp> host_ops;             // PYTORCH_API, in start order (none for other workloads)
  std::vector<collector::MarkerRow> steps;  // the step markers, in start order
  // The pass of the framework op that launched `t` ("forward", "backward", "optimizer"); empty for a
  // task launched outside any (every task of a workload that is not a PyTorch script).
  std::string_view pass_of(const Task& t) const {
    const HostOp* op = host_op(t.pytorch_api_id);
    if (op == nullptr) return {};
    const auto pass = enum_from_value<ModelPass>(op->pass);
    return pass ? enum_name(*pass) : std::string_view("?");
  }
  // The framework op with this id; null if none (0, or not in the trace).
  const HostOp* host_op(std::int64_t id) const {
    const auto it = host_op_index.find(id);
    return it == host_op_index.end() ? nullptr : &host_ops[it->second];
  }

 private:
  std::vector<ApiKind> api_kinds;                               // by API name id: every call of one name has one kind
  std::unordered_map<std::int64_t, std::size_t> host_op_index;  // PYTORCH_API.id -> host_ops index
};

}  // namespace npuscope::analyzer
