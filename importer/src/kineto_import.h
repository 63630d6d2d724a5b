// The Kineto / torch.profiler importer (Format::kKineto): *.pt.trace.json[.gz] and every other
// Kineto trace, CUDA, ROCm, MTIA, PrivateUse1 or CPU only (docs/import.md "Kineto").
//
// Note [Kineto import]
// One pass over the events (stream_chrome_events), in memory bounded by what the joins need:
// - Kineto writes each thread's host ops (cpu_op, user_annotation) first, in start order, then the
//   runtime calls and device activities together as the device reported them. Host ops nest by
//   time on their thread: an open-op stack per thread gives each its parent_id as it arrives.
// - A device task names the host op that launched it by its "External id" (Kineto's external
//   correlation: the innermost op open on the launching thread, the op the emulated traces record
//   as pytorch_api_id). The host ops were passed long before, so the importer keeps, per host op,
//   20 bytes: its row id, name, input shapes and dtypes, and the collective it ran in
//   (HostOpIndex, pages of ids). That is the only state that grows with the trace: ~20 bytes per
//   host op against ~300 bytes of JSON per event.
// - A task and its runtime call (correlation) arrive next to each other, the task first on CUDA,
//   the call first on ROCm: tasks wait in a window (DeviceTaskQueue) until their call is seen and
//   until no earlier-starting task can still arrive, and leave it in start order, which gives each
//   its call_index (the n-th task of its name) as it is written. The window is 16384 tasks: a task
//   arriving later than that behind one that started after it would take a call index one off
//   (none in the real traces: their devices' records are out of start order by a few at most).
// - Times: ts is microseconds with nanosecond digits, whatever displayTimeUnit says, on the clock
//   of baseTimeNanoseconds when the trace has one (ts is then relative to it). Kineto writes
//   baseTimeNanoseconds after the events: it is read from the file's tail before the pass (a seek
//   for a .json; a .json.gz is inflated once more to its end, ~a third of the import's time, and
//   only when the base was not in the head).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "import_sink.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {

// A Kineto trace: a .json / .json.gz whose top level is an object holding traceEvents and
// Kineto's metadata (schemaVersion, deviceProperties, distributedInfo, ...) or Kineto's
// categories, or any JSON named *.pt.trace.json[.gz]. A bare array of events is another format's
// (kChromeJson: trace_view.json, msprof_*.json) unless it is so named.
std::optional<Source> detect_kineto(const std::filesystem::path& path);
void import_kineto(const Source& source, ImportSink& sink);

// baseTimeNanoseconds of a Kineto trace (Note [Kineto import]), nullopt when it has none.
std::optional<std::int64_t> kineto_base_time(const std::string& path);

}  // namespace npuscope::importer
