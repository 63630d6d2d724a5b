// What AscendTimeline keeps between reading the events and writing the rows (Note [Ascend timeline
// mapping] in ascend_timeline.h): one small record per task, host op, collective and flow.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ascend_host_ops.h"
#include "ascend_timeline.h"
#include "npuscope/collector/time_math.h"

namespace npuscope::importer {

// A device task of the Ascend Hardware process.
struct HwTask {
  std::int64_t start_ns = 0, end_ns = 0, connection_id = 0, pid = 0;
  std::int64_t kernel_row = -1;  // its KernelTable row, -1 none
  collector::StringId name_id = 0;
  std::int32_t stream = 0, task_id = -1, tid = 0;
  std::int32_t args = -1;  // its entry in TimelineState::task_args, -1 none
  std::int32_t link = -1;  // the HCCL plane event of the same task, -1 none
  TaskType type = TaskType::kOtherDeviceTask;
};

// Shapes, block dim and metrics a device event carries itself (a timeline without kernel_details).
struct TaskArgs {
  collector::StringId input_shapes = 0, input_dtypes = 0, input_formats = 0, output_shapes = 0, output_dtypes = 0,
                      output_formats = 0, op_type = 0;
  std::int32_t block_dim = -1;
  std::uint32_t pmu_begin = 0, pmu_end = 0;  // in TimelineState::task_pmu
  std::int64_t copy_bytes = 0;               // a copy's `size(B)`; 0 not said
  CopyKind copy_kind = CopyKind::kUnknown;   // its `operation`
};

// What the older msprof timeline's runtime calls say of their copy ("data size": "4096 byte",
// "memcpy direction"), for the copy task of the same connection, or stream and task id.
struct CopyInfo {
  std::int64_t bytes = 0;
  CopyKind kind = CopyKind::kUnknown;
};

// An HCCL op (Group N Communication), or a kernel table's HCCL row no such event has (an export
// without a timeline).
struct Collective {
  std::int64_t start_ns = 0, end_ns = 0, connection_id = 0, pid = -1, count = -1;
  std::int64_t kernel_row = -1;  // its KernelTable row, -1 none
  collector::StringId name_id = 0;
  std::string name;  // op names are few: kept for communication.json and the kind
  std::int32_t tid = 0;
  std::int32_t dtype = -1, algorithm = -1;
  std::int32_t device = -1;  // a kernel row's Device_id; -1: its process's device
};

// A link-level task of a collective (HCCL's Plane N).
struct LinkTask {
  std::int64_t start_ns = 0, end_ns = 0, pid = 0, size = 0, src = -1, dst = -1;
  collector::StringId name_id = 0;
  std::int32_t stream = 0, task_id = -1, tid = 0;
  std::int32_t hw = -1;  // its Ascend Hardware event, -1 none
  LinkTransport transport = LinkTransport::kHccs;
};

struct ApiRef {
  std::int64_t start_ns = 0;
  std::int32_t tid = 0;
};

struct FlowStart {
  std::int64_t ts_ns = 0;
  std::int32_t tid = 0;
};

// Where a flow ends: the task starting at ts on (pid, tid).
struct FlowEndKey {
  std::int64_t pid = 0, ts_ns = 0;
  std::int32_t tid = 0;
  bool operator==(const FlowEndKey&) const = default;
};
struct FlowEndKeyHash {
  std::size_t operator()(const FlowEndKey& k) const {  // unsigned: wraps, never overflows
    return static_cast<std::size_t>(k.ts_ns) * 1000003u ^ static_cast<std::size_t>(k.pid) * 31u ^
           static_cast<std::size_t>(static_cast<std::uint32_t>(k.tid));
  }
};

struct AscendTimeline::State {
  ImportSink& sink;
  TimelineInputs in;
  TimelineResult result;

  HostOps host_ops;
  std::vector<HwTask> hw;
  std::vector<TaskArgs> task_args;
  std::vector<std::pair<collector::StringId, double>> task_pmu;
  std::vector<Collective> collectives;
  std::vector<LinkTask> links;
  std::unordered_map<std::int64_t, ApiRef> api_by_connection;              // the first API call of each connection
  std::unordered_map<std::int64_t, CopyInfo> copy_by_connection;           // the older runtime calls' copies
  std::map<std::pair<std::int32_t, std::int32_t>, CopyInfo> copy_by_task;  // ... by (stream id, task id)
  std::unordered_map<std::uint64_t, FlowStart> flow_starts;                // torch_to_npu, by flow id
  std::unordered_map<FlowEndKey, std::uint64_t, FlowEndKeyHash> flow_ends;
  std::unordered_map<std::int64_t, std::string> process_names;
  std::unordered_map<std::int64_t, std::int32_t> process_devices;  // process_labels "NPU 3": pid -> 3
  std::map<std::pair<std::int64_t, std::int32_t>, std::string> thread_names;

  std::string file;                                         // being read
  std::map<std::string, std::int64_t, std::less<>> counts;  // what of `file` no row takes: to UNMAPPED
  std::string key;                                          // scratch for UNMAPPED keys and names

  State(ImportSink& s, TimelineInputs i) : sink(s), in(std::move(i)) {}
  std::int64_t t(std::int64_t ns) const { return collector::add_saturated(ns, in.clock_offset_ns); }
  // The device a process's label names ("NPU 3"), -1 when it names none.
  std::int32_t labelled_device(std::int64_t pid) const {
    const auto it = process_devices.find(pid);
    return it == process_devices.end() ? -1 : it->second;
  }
  std::int32_t device_of(std::int64_t pid) const {
    const std::int32_t d = labelled_device(pid);
    return d >= 0 ? d : in.device_id;
  }
  void count(std::string_view what, std::int64_t n = 1) {
    const auto it = counts.find(what);
    if (it != counts.end()) {
      it->second += n;
    } else {
      counts.emplace(std::string(what), n);
    }
  }
  void flush_counts() {
    for (const auto& [what, n] : counts) sink.unmapped(file, what, n);
    counts.clear();
  }
};

// Writes the tasks, the communication rows and the kernel rows no event matched (ascend_timeline_write.cpp).
void write_timeline(AscendTimeline::State& s);

}  // namespace npuscope::importer
