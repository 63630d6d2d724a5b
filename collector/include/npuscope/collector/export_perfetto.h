// Exports a trace as a Perfetto protobuf trace (.pftrace), for ui.perfetto.dev and Perfetto's trace
// processor: what Perfetto reads best, where the Chrome JSON of export_chrome.h is "legacy, best
// effort" to it (no interning, float microseconds, only pid/tid tracks).
//
// Note [Perfetto trace layout]
// A stream of TracePackets (the messages and field numbers are collector/proto/perfetto_trace.proto,
// a subset of Perfetto's own; collector/src/perfetto_packets.h writes them), all on one packet
// sequence, whose first packet clears its incremental state: event names, categories, argument
// names and argument string values are interned, each sent once, in the packet that first uses it.
// The track tree, each track described before its first event:
// - host (pid 1): a thread track per host thread ("thread N", tid 10⁶ + N) holding the PyTorch ops,
//   module calls and autograd functions (PYTORCH_API); under it, the thread's API calls ("thread N
//   API") and its markers and steps ("thread N markers") on tracks of their own;
// - npu:N (pid 3 + N, the device spec as its label) and cpu golden (pid 2): a track per stream
//   ("stream S": the tasks; "stream S copies": MEMCPY rows; golden kernels run on host threads,
//   so "thread N" there), a track per communicator after them ("hccl_world_group (rank 2 of 8)":
//   its collectives, COMMUNICATION), and counter tracks: the device memory in bytes (allocated,
//   reserved) and, in a group "profile counters", a real profile's counters by name (COUNTER: "AI
//   Core Freq (MHz)", "HBM 0/Read (MB/s)", ...; a counter of no device goes under the host).
// Processes are ordered host, npu:0, npu:1, ..., cpu golden. Every track keeps its own name
// (sibling_merge_behavior NONE), so that a track is one row of the trace processor's track table.
// Slices are SLICE_BEGIN / SLICE_END pairs (the END without name or category, as Perfetto matches
// them), and must nest on a track: rows come in start order, and a row that would overlap one still
// open without fitting inside it (a real profile's overlapping kernels, Ascend issue 133) goes to
// the next lane of that track ("stream S (2)", ...), never mis-nested. Overflowing and underflowing
// tasks get an instant inside them, as in the Chrome export. Flows: each API call to the task or
// copy it launched (flow_ids = connection_id on both, the API call's only when it launched
// something: device work is written first), and each PyTorch op to every task it launched (Note
// [Flows from PyTorch ops] in collector/src/op_flows.h). A task's arguments are its op type, task
// type, block dim, costs, overflow, shapes, dtypes and formats, its ids, a real profile's hardware
// metrics ("pmu.aic_mac_ratio", ...: TASK_PMU) and a compare's verdict ("compare.verdict",
// "compare.cosine", ...: COMPARE_RESULT); an API call's its connection id and level; a PyTorch op's
// pass, module, sequence number and input shapes and dtypes; a collective's communicator, index,
// algorithm, reduction, dtype, bytes, peer and wait.
// Timestamps are nanoseconds on the trace's own clock (no clock id: Perfetto takes them as they
// are); a row that starts before 0 cannot be written (the trace processor drops negative
// timestamps) and is counted instead. The file is streamed (Note [Exports stream]): beyond the
// output buffer it holds the interning tables, the open slices of each lane, a bit per connection
// id, a count per PyTorch op, the communicators and one window of per-task rows (Note [Task rows by
// window] in collector/src/task_rows_window.h), never the rows.
#pragma once

#include <cstdint>
#include <string>

#include "npuscope/collector/export_error.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector {

struct PerfettoExportResult {
  std::string path;
  std::int64_t packets = 0;  // TracePackets written, track descriptors included
  std::int64_t tracks = 0;   // track descriptors (processes, threads, streams, lanes, communicators, counters)
  std::int64_t tasks = 0, apis = 0, memcpys = 0, markers = 0, pytorch_ops = 0, communications = 0;  // slices
  std::int64_t memory_records = 0;     // each two counter values
  std::int64_t counter_values = 0;     // COUNTER rows (a real profile's frequency, bandwidths, ...)
  std::int64_t flows = 0;              // API calls joined to the work they launched
  std::int64_t op_flows = 0;           // tasks joined to the PyTorch op that launched them
  std::int64_t unlinked_op_tasks = 0;  // tasks of an op that got no flow (Note [Flows from PyTorch ops])
  std::int64_t pmu_values = 0;         // hardware metrics written as task arguments (TASK_PMU)
  std::int64_t compared_tasks = 0;     // tasks with a compare verdict (COMPARE_RESULT)
  std::int64_t overflow_tasks = 0, underflow_tasks = 0;
  std::int64_t extra_lanes = 0;     // lanes opened for rows that overlap others on their track
  std::int64_t negative_times = 0;  // rows not written: they start before 0
  std::int64_t bytes = 0;           // size of the file written
};

// Writes `path` (replacing it). Throws ExportError if it cannot be written, TraceError if the
// trace cannot be read; on failure `path` is left as it was.
PerfettoExportResult export_perfetto_trace(const TraceReader& reader, const std::string& path);

}  // namespace npuscope::collector
