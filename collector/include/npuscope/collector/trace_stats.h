// The counters a trace keeps about its own recording (META "stat.<name>"), declared once.
//
// Note [Trace stats]
// The injection library, the spool replay and the writer count what they did and, above all, what
// they lost (Perfetto's `stats` table does the same). Each counter is declared here once with a
// severity and a one-line meaning; `npuscope run` and `npuscope analyze` report every non-zero
// data-loss counter from this list without naming any of them, and docs/schema.md lists them all,
// so a new counter is one line here and one increment where it happens.
// A trace written by a newer build may hold counters this build does not know: they are read back
// as kUnknown and still shown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::collector {

enum class StatSeverity : std::uint8_t {
  kInfo,      // a figure about the recording (records written, bytes dumped)
  kWarning,   // the workload or the settings limited what was recorded (a dump cap, unbalanced markers)
  kDataLoss,  // records the profiler lost: every figure built on them undercounts
  kUnknown,   // a counter this build does not know (a newer trace)
};
std::string_view severity_name(StatSeverity s);  // "info", "warning", "data_loss", "unknown"

// X(enumerator, name in META after "stat.", severity, doc); DROPPED(Record, name, Kind, lost): the
// per-kind counters of records lost, dropped_records.<name>, follow from the record kinds (Note
// [Record kinds] in hook_api.h), between the total and the rest.
#define NPUSCOPE_TRACE_STATS(X, DROPPED)                                                                            \
  X(kDroppedRecords, "dropped_records", kDataLoss,                                                                  \
    "Records lost in all (the sum of the dropped_records.* counters): a per-thread buffer was full.")               \
  NPUSCOPE_HOOK_RECORDS(DROPPED)                                                                                    \
  X(kDroppedAfterStop, "dropped_records.after_stop", kDataLoss,                                                     \
    "Records that arrived after the profiler stopped (threads still running at exit).")                             \
  X(kDroppedUnfinishedAtStop, "dropped_records.unfinished_at_stop", kDataLoss,                                      \
    "Hook calls still running 1 s after the stop began: their records are lost.")                                   \
  X(kLaunchInfoLost, "launch_info_lost", kDataLoss,                                                                 \
    "Tasks whose launch record was lost, so their tensors could not be matched to a step filter.")                  \
  X(kOrphanTensors, "orphan_tensors", kDataLoss, "Tensors whose task never ended: not written.")                    \
  X(kTensorDumpsDroppedMemory, "tensor_dumps_dropped_memory", kDataLoss,                                            \
    "Tensor dumps dropped because the buffer cap (`buffer_bytes`) was reached.")                                    \
  X(kSpoolTornBytes, "spool_torn_bytes", kDataLoss,                                                                 \
    "Bytes at the end of a killed workload's spool that were cut mid-frame and could not be read.")                 \
  X(kUnpairedApi, "unpaired_api", kWarning,                                                                         \
    "API calls whose enter or exit was never seen (ended at their last record).")                                   \
  X(kUnpairedMarkers, "unpaired_markers", kWarning, "Range pops or step ends with no matching push or begin.")      \
  X(kTensorDumpsSkipped, "tensor_dumps_skipped", kWarning,                                                          \
    "Tensor dumps skipped once `--max-dump-bytes` was reached.")                                                    \
  X(kRecords, "records", kInfo, "Records the drain thread turned into rows.")                                       \
  X(kTensorDumps, "tensor_dumps", kInfo, "Tensors whose raw bytes were dumped.")                                    \
  X(kTensorBytesDumped, "tensor_bytes_dumped", kInfo, "Uncompressed bytes of the dumped tensors.")                  \
  X(kTensorBytesCompressed, "tensor_bytes_compressed", kInfo, "Bytes the dumped tensors take in the trace (zstd).") \
  X(kOverflowTasks, "overflow_tasks", kInfo, "Tasks whose outputs overflowed (TASK.overflow = 1).")                 \
  X(kSaturatedTasks, "saturated_tasks", kInfo, "Tasks whose outputs were clamped in saturation mode.")              \
  X(kUnderflowTasks, "underflow_tasks", kInfo, "Tasks whose outputs underflowed to zero (TASK.underflow > 0).")

enum class StatId : std::uint8_t {
#define NPUSCOPE_STAT_ENUM(e, name, severity, doc) e,
#define NPUSCOPE_DROPPED_ENUM(Record, name, Kind, lost) kDropped##Kind,
  NPUSCOPE_TRACE_STATS(NPUSCOPE_STAT_ENUM, NPUSCOPE_DROPPED_ENUM)
#undef NPUSCOPE_DROPPED_ENUM
#undef NPUSCOPE_STAT_ENUM
};

struct StatInfo {
  StatId id;
  std::string_view name;
  StatSeverity severity;
  std::string_view doc;
};

inline constexpr StatInfo kStats[] = {
#define NPUSCOPE_STAT_INFO(e, name, severity, doc) {StatId::e, name, StatSeverity::severity, doc},
#define NPUSCOPE_DROPPED_INFO(Record, name, Kind, lost) \
  {StatId::kDropped##Kind, "dropped_records." #name, StatSeverity::kDataLoss, lost},
    NPUSCOPE_TRACE_STATS(NPUSCOPE_STAT_INFO, NPUSCOPE_DROPPED_INFO)
#undef NPUSCOPE_DROPPED_INFO
#undef NPUSCOPE_STAT_INFO
};

constexpr const StatInfo& stat_info(StatId id) { return kStats[static_cast<std::size_t>(id)]; }
constexpr std::string_view stat_name(StatId id) { return stat_info(id).name; }
// nullptr for a counter this build does not know.
const StatInfo* find_stat(std::string_view name);

// A counter read from a trace, with what this build knows of it.
struct StatValue {
  std::string name;
  std::int64_t value = 0;
  StatSeverity severity = StatSeverity::kUnknown;
  std::string_view doc;  // empty for an unknown counter
};

// Every non-zero counter of `stats` whose severity is data loss (or unknown, which may be), in the
// order of kStats, the total first: what a report must not leave out.
std::vector<StatValue> data_loss(const std::vector<StatValue>& stats);

// One line for a terminal: "12 records lost: dropped_records.api = 12 (Host API calls lost ...)".
std::string describe(const StatValue& s);

}  // namespace npuscope::collector
