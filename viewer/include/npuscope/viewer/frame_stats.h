// What one frame of the timeline drew, lane by lane: the `--frame-stats FILE.json` dump the viewer
// tests compare with the trace, and what the frame bench reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/viewer/lod.h"
#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

struct LaneFrameStats {
  std::string title;
  LaneKind kind = LaneKind::kStream;
  std::size_t rows = 0;
  std::size_t drawn = 0;         // drawn items: single items plus folded runs
  std::size_t folded = 0;        // folded runs among them
  std::size_t folded_items = 0;  // items inside those runs
  std::size_t items = 0;         // items in view: single items + folded_items
  std::size_t samples = 0;       // kMemory: counter samples drawn
  std::size_t highlighted = 0;   // outlined tasks of the selected collective (a multi-rank view)
  std::string group;             // its rank's group, "rank 3 (node 0)" (a multi-rank view), else ""
};

struct FrameStats {
  std::int64_t view_start_ns = 0, view_end_ns = 0;
  double width_px = 0;
  std::vector<LaneFrameStats> lanes;  // the lanes drawn (on screen), in screen order
  std::int64_t selected_task = 0;     // TASK.task_id of the selection, 0 if none
  bool flow_line = false;             // the flow line from its API call was drawn
  std::int32_t pipe_block = -1;       // the block whose pipe lanes (kPipe) were drawn, -1 if none
  std::vector<std::string> groups;    // a multi-rank view: its rank groups' titles, open or not, in order
  // --diff BASE.db: what the Diff panel and the details panel showed of the diff this frame.
  struct Diff {
    std::int64_t op_rows = -1;   // rows of the op table (diff_ops) in the Diff panel; -1: not drawn
    std::int64_t base_task = 0;  // the selection's BASE task in the details panel (0: none shown)
    std::int64_t base_ns = 0;    // and its duration
    std::string details;         // the details panel's line ("base duration: ...", "added: ..."); "" none
    bool shown() const { return op_rows >= 0 || !details.empty(); }
  } diff;
  // --compare NPU BENCH: what the Compare panel showed of the dump comparison this frame.
  struct Dumps {
    bool shown = false;
    std::string status;              // the progress line while it runs; "" once done
    std::string error;               // a dump that could not be read or compared; "" none
    std::vector<std::string> notes;  // dumps of one side with no counterpart
    std::int64_t comparisons = 0;    // steps and ranks compared so far
    std::string place, mode;         // the one shown ("step 0, rank 0"), its mode ("statistics")
    std::int64_t entries = 0;        // rows of its entries table
    std::int64_t entries_shown = 0;  // of them, what the filter lets through
    std::int64_t rows_drawn = 0;     // entry rows drawn this frame (the rest are clipped)
    std::int64_t failed = 0;
    std::int64_t unmatched_npu = 0, unmatched_bench = 0;  // entries and values with no counterpart
    std::string first_failing, first_introducing;         // entry names, "" none (forward)
    std::string first_failing_backward, first_introducing_backward;
    std::string selected;                     // the selected entry
    std::int64_t value_rows = 0;              // its compare_result rows shown
    std::vector<std::string> stack, modules;  // its stack frames and module chain shown
  } dumps;

  // Counts one row's draw list into `lane`.
  static void add_row(LaneFrameStats& lane, const std::vector<DrawItem>& drawn);
  std::size_t drawn() const;
  std::size_t folded() const;
  std::size_t items() const;
  // {"view": {...}, "lanes_drawn": N, "items_drawn": N, "folded_items": N (drawn items that are folded
  //  runs), "items_in_folds": N, "items_in_view": N, "selected_task": N, "flow_line": B, "pipe_block": N,
  //  "collective_highlights": N, "groups": [...] (a multi-rank view only), "diff": {"op_rows": N,
  //  "base_task": N, "base_ns": N, "details": "..."} (when a diff panel or line was drawn), "dumps":
  //  {... Dumps' fields ...} (when the dump comparison was drawn), "lanes":
  //  [{... the same per lane ..., "group": "rank 3 (node 0)" (a multi-rank view only)}]}
  std::string to_json() const;
};

const char* lane_kind_name(LaneKind kind);  // "host_thread", "stream", "memcpy", "memory", "markers", "pytorch", "pipe"

}  // namespace npuscope::viewer
