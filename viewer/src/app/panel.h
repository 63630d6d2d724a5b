// One class per panel (STYLE 8): a title for its tab, an id for --panel, and draw().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "viewer_state.h"

namespace npuscope::viewer {

class Panel {
 public:
  virtual ~Panel() = default;
  virtual const char* title() const = 0;
  virtual const char* id() const = 0;  // --panel NAME
  virtual void draw() = 0;
};

std::unique_ptr<Panel> make_details_panel(ViewerState& state);
std::unique_ptr<Panel> make_op_stats_panel(ViewerState& state);
std::unique_ptr<Panel> make_findings_panel(ViewerState& state);
std::unique_ptr<Panel> make_compare_panel(ViewerState& state);
std::unique_ptr<Panel> make_search_panel(ViewerState& state);
std::unique_ptr<Panel> make_diff_panel(ViewerState& state);  // needs state.diff (--diff)

// What the session gives, each frame, a panel that also draws without a trace (and so without a
// ViewerState): where its frame statistics go, and whether this is the one frame of a screenshot.
struct FrameContext {
  FrameStats* stats = nullptr;  // null between frames
  bool single_frame = false;
};

class DumpCompareJob;  // dump_job.h
// --compare NPU BENCH: the dump comparison (beside a trace's panels, or alone); `state` is null
// without a trace, `select` an entry to select first (--select without a trace).
std::unique_ptr<Panel> make_dump_compare_panel(DumpCompareJob& job, ViewerState* state, const FrameContext& frame,
                                               std::string select);

}  // namespace npuscope::viewer
