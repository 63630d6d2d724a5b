// `npuscope diff BASE.db NEW.db`: what got slower between two profiles, and why (msprof-analyze's
// compare, Holistic Trace Analysis' TraceDiff): the overall split of the time, every op and op type,
// every kernel shape, memory and host APIs, each with BASE, NEW, diff = NEW - BASE and ratio =
// NEW / BASE (REFERENCE.md "Profile diff"). The result is a Report (report.h), written by the same
// text, JSON and CSV writers as `npuscope analyze` and drawn by the viewer's Diff panel.
//
// Note [Diff op matching]
// An op is a task that ran a kernel (AI Core, AI Vector, AI CPU, a collective, or the golden
// backend's host CPU task). The ops of the two runs are paired as the comparator pairs NPU and
// golden ops (Note [Op matching] in comparator/src/op_matching.h), in stages, each on what the one
// before left:
//   1. by name and call index, after the name map renamed the BASE ops (`--op-name-map`: ops
//      renamed between the runs); the call index counts from the first call of the name in the
//      compared range, so that step 3 of one run pairs with step 7 of the other;
//   2. by op type and input shapes, in execution order (a renamed scope the map missed);
//   3. by op type alone, in execution order (an op whose shapes changed and whose name did too).
// What is left is added (NEW only) or removed (BASE only). Each stage sorts compact keys and
// merges them: O(N log N) and ~16 bytes per op, where msprof-analyze's LCS alignment is O(N*M)
// (its own warning: over 30 minutes past 5e9 cells); 10M-task traces diff in seconds.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "npuscope/analyzer/report.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

struct DiffOptions {
  // BASE op name -> NEW op name (--op-name-map): ops renamed between the two runs.
  std::map<std::string, std::string> op_name_map;
  // Compare one step (MARKER step ranges) of each run, both or neither: a task belongs to the step
  // its launch (TASK.queued_ns) falls in; host APIs, framework ops and memory records by their time.
  std::optional<std::int64_t> base_step, new_step;
  int top = 20;  // rows the terminal shows per table (JSON and CSV have them all)
  // Fill DiffResult::pairs (the viewer: each NEW op's BASE duration).
  bool keep_pairs = false;
  // Set from another thread to stop early: diff() then throws AnalyzeCancelled (analyze.h).
  const std::atomic<bool>* cancel = nullptr;
};

// A bad option or one the traces cannot satisfy (one step flag without the other, a step a trace
// does not have): the message says what the traces hold.
class DiffError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How an op pair was found (Note [Diff op matching]).
enum class DiffMatch : std::uint8_t { kName, kNameMap, kTypeShape, kType };
std::string_view diff_match_name(DiffMatch m);  // "name", "name map", "type+shape", "type"

// One matched op: its task in each trace and their device durations.
struct DiffPair {
  std::int64_t new_task_id = 0, base_task_id = 0;
  std::int64_t new_ns = 0, base_ns = 0;
  DiffMatch match = DiffMatch::kName;
};

struct DiffResult {
  Report report;
  std::vector<DiffPair> pairs;  // with keep_pairs: every matched op, by new_task_id

  // The pair of NEW's task `task_id`; null if it has none (added, or keep_pairs off).
  const DiffPair* pair_of_new(std::int64_t task_id) const;
};

// Throws DiffError for bad options, collector::TraceError for an unreadable trace, AnalyzeCancelled.
DiffResult diff(const collector::TraceReader& base, const collector::TraceReader& next, const DiffOptions& options);

// Every table diff() writes (docs/diff.md's generated part, `npuscope diff --describe`).
std::vector<const TableSpec*> diff_table_specs();
std::string diff_tables_markdown();

}  // namespace npuscope::analyzer
