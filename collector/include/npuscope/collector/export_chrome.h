// Exports a trace as Chrome Trace Event JSON, for the Perfetto UI (ui.perfetto.dev) and
// chrome://tracing.
//
// Note [Chrome trace layout]
// One process per device ("npu:0", "npu:1", "cpu golden"; the device spec as its label) and one
// "host" process.
// - host: a thread per host thread (API calls as "X" slices, markers and steps as slices around
//   them, instants as "i" events; a PyTorch script's aten ops, module calls and autograd functions,
//   PYTORCH_API, as "X" slices of category "cpu_op", "module", "backward" or "optimizer", with their
//   module, pass, sequence number and input shapes in args).
// - npu:N: a thread per stream (TASK rows as "X" slices named after the op instance, with op_type,
//   task_type, block_dim, flops, bytes, overflow, connection_id, call_index in args; MEMCPY rows as
//   "Memcpy HtoD" slices), device memory as two "C" counters (allocated, reserved bytes).
// - cpu golden: golden kernels run inline on host threads, so a thread per host thread.
// Overflowing tasks get "cname":"terrible" (red) and an "overflow" instant at their start; tasks
// whose results underflowed (TASK.underflow) an "underflow" instant, and underflow/subnormal in args.
// Each API call is joined to the task or copy it launched by a flow: "s" at the start of the API
// slice, "f" with "bp":"e" at the start of the device slice, id = connection_id (Note [Flows] in
// export_chrome.cpp); the emulator launches at most one task per API call, so an id is one arrow.
// Timestamps are microseconds with three decimals (exact nanoseconds). Pids and tids: Note [Export
// pids] in collector/src/export_util.h. Counters use tid = pid.
// The file is streamed (Note [Exports stream]); beyond the output buffer it holds a bit per
// connection id (which API calls launched work) and the set of lanes, never the rows.
#pragma once

#include <cstdint>
#include <string>

#include "npuscope/collector/export_error.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector {

struct ChromeExportResult {
  std::string path;
  std::int64_t events = 0;  // entries of traceEvents, metadata included
  std::int64_t tasks = 0, apis = 0, memcpys = 0, markers = 0, memory_records = 0, pytorch_ops = 0;
  std::int64_t flows = 0;  // s/f pairs
  std::int64_t overflow_tasks = 0;
  std::int64_t underflow_tasks = 0;
  std::int64_t bytes = 0;  // size of the file written
};

// Writes `path` (replacing it). Throws ExportError if it cannot be written, TraceError if the
// trace cannot be read; on failure `path` is left as it was.
ChromeExportResult export_chrome_trace(const TraceReader& reader, const std::string& path);

}  // namespace npuscope::collector
