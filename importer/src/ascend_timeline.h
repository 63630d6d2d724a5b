// The Chrome-event timelines of the Ascend tools into a trace: torch_npu's trace_view.json and
// msprof's msprof_*.json (and the older msprof's per-device timeline/*.json), joined with
// kernel_details.csv / op_summary_*.csv.
//
// Note [Ascend timeline mapping]
// The events are classified by what they hold, not by their process (a file may name its processes
// after their events): cat cpu_op / python_function -> PYTORCH_API (ProfilerStep#N -> a step marker
// with its number); an X event with "Task Type" (the Ascend Hardware process, tid "Stream N") -> a
// TASK on stream "Physic Stream Id", enriched by its kernel_details row (Note [Kernel details join]);
// with "src rank" / "task type" (HCCL's Plane N threads) -> an HCCL_TASK and, for a transfer of some
// bytes, a COMMUNICATION_LINK; with "alg_type" / "count" (HCCL's Group N Communication) -> an HCCL
// TASK, its COMMUNICATION and COMMUNICATOR; with "level" or an `X@` name (the CANN process) -> API;
// a process labelled "NPU N" (msprof's timeline of several devices) puts its tasks on device N;
// ph C -> COUNTER; torch_to_npu flows -> TASK.pytorch_api_id. The rest (Overlap Analysis, enqueue /
// dequeue, task-queue and fwdbwd flows, display metadata, arguments no column takes) is counted in
// UNMAPPED. The device tasks of a collective appear twice, once on their stream (Ascend Hardware:
// "Notify Wait", "SDMA", with the connection id) and once on their plane (HCCL: "Memcpy", with ranks
// and size); they are one TASK, keyed by (stream, task id, start).
// Events come in no useful order (torch_npu writes the host ops of a thread out of order, and the
// process names after the events), and a task's host op is known only once every op of its thread
// is: so the importer keeps each task, host op, collective and flow end as a small record (40-80
// bytes; a few percent of the JSON) and writes the rows when every file is read. API calls and
// counters are written as they stream past.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hccl_groups.h"
#include "import_sink.h"
#include "kernel_table.h"

namespace npuscope::importer {

// A collective as communication.json describes it: its group and the time it waited for the others.
struct CollectiveInfo {
  std::string group;
  std::int64_t wait_ns = -1;  // -1: not said
};

struct TimelineInputs {
  std::int32_t device_id = 0;        // of the events whose process says none
  std::int32_t rank = -1;            // this rank (META rank); -1 unknown
  std::int64_t clock_offset_ns = 0;  // added to every time read (older msprof: boot-relative clocks)
  KernelTable* kernels = nullptr;    // kernel_details.csv / op_summary: enriches the tasks
  std::map<std::string, CollectiveInfo, std::less<>> collectives;  // communication.json, by op name
  // communication_matrix.json: per group, past the largest rank its links reached (a timeline
  // without HCCL transfer events: an export without trace_view.json).
  std::map<std::string, std::int32_t, std::less<>> group_size_seen;
  GroupRanks group_ranks;  // profiler_metadata.json's parallel_group_info (Note [Communicator members])
};

struct TimelineResult {
  std::int64_t events = 0, bytes = 0;
  bool truncated = false;
  std::int32_t world_size = 0;        // the largest communicator seen (0: none)
  std::int32_t device_id = 0;         // the device of what says none (TimelineInputs::device_id)
  std::vector<std::int32_t> devices;  // the devices tasks were written on, in order (device_id if none)
  bool steps = false;                 // step markers were written
  bool split_cores = false;           // mix kernels or aiv_ metrics: separate cube and vector cores (910B family)
};

class AscendTimeline {
 public:
  AscendTimeline(ImportSink& sink, TimelineInputs inputs);
  ~AscendTimeline();
  AscendTimeline(const AscendTimeline&) = delete;
  AscendTimeline& operator=(const AscendTimeline&) = delete;

  // Streams one file's events (called for each file of a timeline cut in slices). ImportError for a
  // file that is no Chrome trace; a file cut short is read up to the cut.
  void read(const std::string& path, const std::function<void(std::int64_t)>& progress = {});
  // Writes what the events left to write, and the kernel rows no event matched.
  TimelineResult finish();

  struct State;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace npuscope::importer
