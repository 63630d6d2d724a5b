// Step time as msprof writes it (the Ascend PyTorch Profiler's step_trace_time.csv, analysis.db's
// StepTraceTime, msprof-analyze's cluster_step_trace_time): per device and step, the device time
// split into Computing, Communication, their overlap, Free and Preparing. One definition, used by
// `npuscope analyze` (the step_time table), `npuscope cluster` (cluster_step_trace_time) and the
// golden checks against a real profile's own figures.
//
// Note [Step time]
// As torch_npu's profiler computes it (TraceStepTimeDbParser and StepInfoDbParser; the text
// export's TraceStepTimeParser sums msprof's Overlap Analysis slices the same way), per device:
// - A step is a step marker's host range [host_start, host_end] (ProfilerStep#N: MARKER rows of
//   kind step, one per step number); without markers the whole trace is one step (step -1).
// - The step's kernels are the device kernels (is_device_kernel, Note [What is an op]: AI_CORE,
//   AI_VECTOR_CORE, MIX_AIC, MIX_AIV, AI_CPU, a GPU's KERNEL) launched inside the host range (Note
//   [Launch time] in analyzer/src/launch_times.h). msprof counts the tasks that have a
//   COMPUTE_TASK_INFO row: copies, events, notify waits and the link tasks of a collective
//   (HCCL_TASK) are not computing.
// - Its window on the device is [start, end): start = its first kernel's start (host_start without
//   kernels), end = the later of its last kernel's end and host_end: the device may still run the
//   step's work after the host moved on.
// - Its collectives are the communication ops (TASK rows of type HCCL: COMMUNICATION_OP, an NCCL
//   kernel; not their link tasks) on the device that start inside the window (the first such
//   window, when windows overlap); without markers every one.
// - Computing = |U kernels|; Communication = |U collectives|; Overlapped = |U kernels n U
//   collectives|; Communication(Not Overlapped) = Communication - Overlapped; Free = the gaps
//   between the step's busy spans: (last busy end - first busy start) - |U kernels U collectives|;
//   Preparing = the step's first kernel or collective start - host_start (without markers: - the
//   first framework op's start, 0 without framework ops; 0 when the step ran nothing on the device);
//   Bubble = |U receive ops| (collectives named hcom_receive*, pipeline parallelism's wait), Stage
//   = (last busy end - first busy start) - Bubble.
// Checked against a real 910B profile's analysis.db: every figure equal to the ns
// (tests/analyzer/step_time_test.cpp writes its tasks' shape).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

struct StepTime {
  std::int32_t device_id = 0;                       // -1: all devices as one (StepTimeOptions::by_device false)
  std::optional<std::int64_t> step;                 // MARKER.step; none: the trace has no step markers
  std::int64_t host_start_ns = 0, host_end_ns = 0;  // the marker's range (the whole trace: the window)
  std::int64_t start_ns = 0, end_ns = 0;            // the window on the device (Note [Step time])
  std::int64_t kernels = 0, collectives = 0;        // counted in it
  std::int64_t computing_ns = 0, communication_ns = 0, overlapped_ns = 0, free_ns = 0, preparing_ns = 0;
  std::int64_t bubble_ns = 0, stage_ns = 0;

  std::int64_t communication_not_overlapped_ns() const { return communication_ns - overlapped_ns; }
  // msprof's "Communication(Not Overlapped and Exclude Receive)".
  std::int64_t communication_not_overlapped_exclude_receive_ns() const {
    return communication_not_overlapped_ns() - bubble_ns;
  }
  bool operator==(const StepTime&) const = default;
};

struct StepTimeOptions {
  bool by_device = true;  // false: one row per step for all devices (a rank of a cluster)
};

// Rows by device, then step in host order. Reads TASK, MARKER and, for an imported trace whose
// tasks lack their launch time, API and PYTORCH_API. Throws collector::TraceError for an unreadable
// trace.
std::vector<StepTime> step_times(const collector::TraceReader& trace, const StepTimeOptions& options = {});

}  // namespace npuscope::analyzer
