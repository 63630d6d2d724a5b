// Exports a trace as a Perfetto protobuf trace (.pftrace), for ui.perfetto.dev and Perfetto's trace
// processor: what Perfetto reads best, where the Chrome JSON of export_chrome.h is "legacy, best
// effort" to it (no interning, float microseconds, only pid/tid tracks).
//
// Note [Perfetto trace layout]
// A stream of TracePackets (the messages and field numbers are collector/proto/perfetto_trace.proto,
// a subset of Perfetto's own), all on one packet sequence, whose first packet clears its
// incremental state: event names, categories and argument names are interned, each sent once, in
// the packet that first uses it. The track tree, each track described before its first event:
// - host (pid 1): a thread track per host thread ("thread N", tid 10⁶ + N) holding the PyTorch ops,
//   module calls and autograd functions (PYTORCH_API); under it, the thread's API calls ("thread N
//   API") and its markers and steps ("thread N markers") on tracks of their own;
// - npu:N (pid 3 + N, the device spec as its label) and cpu golden (pid 2): a track per stream
//   ("stream S": the tasks; "stream S copies": MEMCPY rows; golden kernels run on host threads,
//   so "thread N" there), and the device memory as two counter tracks in bytes (allocated,
//   reserved).
// Processes are ordered host, npu:0, npu:1, ..., cpu golden. Every track keeps its own name
// (sibling_merge_behavior NONE), so that a track is one row of the trace processor's track table.
// Slices are SLICE_BEGIN / SLICE_END pairs (the END without name or category, as Perfetto matches
// them), and must nest on a track: rows come in start order, and a row that would overlap one still
// open without fitting inside it (a real profile's overlapping kernels, Ascend issue 133) goes to
// the next lane of that track ("stream S (2)", ...), never mis-nested. Overflowing and underflowing
// tasks get an instant inside them, as in the Chrome export. Each API call is joined to the task or
// copy it launched by a flow (flow_ids = connection_id on both, the API call's only when it launched
// something: device work is written first). A task's arguments are its op type, task type, block
// dim, costs, overflow, shapes, dtypes and formats, and its ids; an API call's its connection id and
// level; a PyTorch op's pass, module, sequence number and input shapes and dtypes.
// Timestamps are nanoseconds on the trace's own clock (no clock id: Perfetto takes them as they
// are); a row that starts before 0 cannot be written (the trace processor drops negative
// timestamps) and is counted instead. The file is streamed (Note [Exports stream]): beyond the
// output buffer it holds the interning tables, the open slices of each lane and a bit per
// connection id, never the rows.
#pragma once

#include <cstdint>
#include <string>

#include "npuscope/collector/export_error.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector {

struct PerfettoExportResult {
  std::string path;
  std::int64_t packets = 0;  // TracePackets written, track descriptors included
  std::int64_t tracks = 0;   // track descriptors (processes, threads, streams, lanes, counters)
  std::int64_t tasks = 0, apis = 0, memcpys = 0, markers = 0, pytorch_ops = 0;  // slices
  std::int64_t memory_records = 0;                                              // each two counter values
  std::int64_t flows = 0;  // API calls joined to the work they launched
  std::int64_t overflow_tasks = 0, underflow_tasks = 0;
  std::int64_t extra_lanes = 0;     // lanes opened for rows that overlapped others on their track
  std::int64_t negative_times = 0;  // rows not written: they start before 0
  std::int64_t bytes = 0;           // size of the file written
};

// Writes `path` (replacing it). Throws ExportError if it cannot be written, TraceError if the
// trace cannot be read; on failure `path` is left as it was.
PerfettoExportResult export_perfetto_trace(const TraceReader& reader, const std::string& path);

}  // namespace npuscope::collector
